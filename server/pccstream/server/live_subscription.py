"""One viewer's subscription to the live channel: a WebTransport stream per group, or
datagrams with XOR parity (`live.fec=K`, or `auto`: parity that follows the loss).

Rules (shared/PROTOCOL.md, "Live"): each group goes on its own unidirectional stream, newer
groups are served first (stream priority = group sequence), and a group whose data is still
unsent `keep` after its last frame was captured is superseded: its stream is reset and nothing
more of it is sent ("send what is still useful").

With `fec` set ("Live over datagrams") each chunk goes out as fragment datagrams
(`pccstream.live_datagrams`); a superseded group's datagrams still queued are taken back, and
the data fragments of the groups not yet superseded are kept to answer the viewer's NACKs. The
viewer learns that a group is superseded from a LIVE_GONE datagram (the stream path's reset).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pccstream import live_datagrams, protocol
from pccstream.server.live import LiveChannel
from pccstream.server.live_parity import LiveFec, LossCounts, parity_policy

log = logging.getLogger("pccstream.live")

# WebTransport over HTTP/3 maps application error codes into the HTTP/3 error space
# (draft-ietf-webtrans-http3: 0x52e4a40fa8db + e + floor(e / 0x1e)).
_WT_ERROR_BASE = 0x52E4A40FA8DB


# At most one log line this often about NACKs ignored (a viewer can send any number).
NACK_LOG_INTERVAL_S = 60.0
# Superseded groups remembered so a NACK for one is answered LIVE_GONE (a viewer gives a group
# up `keep` after a newer one began, so only the last few can still be NACKed).
GONE_MEMORY_GROUPS = 64


def webtransport_error_code(code: int) -> int:
    return _WT_ERROR_BASE + code + code // 0x1E


class UniStreamWriter(Protocol):
    """Opening and writing server-initiated streams (telemetry, live groups)."""

    def open_uni_stream(self, session_id: int) -> int: ...

    def send(self, stream_id: int, data: bytes, end_stream: bool) -> None: ...

    def flush(self) -> None: ...


class GroupWriter(UniStreamWriter, Protocol):
    """What a subscription needs from the connection."""

    def reset_stream(self, stream_id: int, error_code: int) -> None: ...

    def has_unsent(self, stream_id: int) -> bool: ...

    def set_stream_priority(self, stream_id: int, priority: int | None) -> None: ...

    # HTTP/3 datagrams on the session (`live.fec`): payloads without the quarter stream id.

    def send_datagram(self, session_id: int, payload: bytes) -> None: ...

    def send_datagrams_first(self, session_id: int, payloads: Sequence[bytes]) -> None:
        """Queue `payloads` ahead of every datagram of the connection not yet sent."""
        ...

    def drop_queued_datagrams(self, session_id: int, doomed: Callable[[bytes], bool]) -> int:
        """Take the session's queued datagrams whose payload is `doomed` out unsent; returns
        how many."""
        ...


@dataclass
class LiveCounters:
    groups_opened: int = 0
    groups_completed: int = 0  # every chunk written and FIN queued
    groups_dropped: int = 0  # reset because superseded with data unsent
    chunks: int = 0
    bytes: int = 0  # chunk bytes (parity and headers not counted)
    # live.fec (datagram delivery) only:
    datagrams_sent: int = 0  # data and parity fragments queued, retransmissions not counted
    parity_sent: int = 0
    nacks_received: int = 0
    fragments_retransmitted: int = 0
    nacks_ignored: int = 0  # malformed, or for a group, chunk or rendition never held
    gones_sent: int = 0  # LIVE_GONE: a group superseded with fragments unsent, or NACKed after
    parity_k: int = 0  # data fragments per parity fragment of the latest chunk (0: none)
    parity_changes: int = 0  # times that K changed (live.fec=auto)
    fragments_dropped_unsent: int = 0  # queued fragments taken back at supersede


@dataclass
class _GroupStream:
    stream_id: int
    rendition: int
    finished: bool = False
    drop_timer: asyncio.TimerHandle | None = None


@dataclass
class _DatagramGroup:
    rendition: int
    # chunk index → its data fragment datagrams as first sent (what a NACK may ask for again)
    data_fragments: dict[int, list[bytes]] = field(default_factory=dict)
    finished: bool = False
    drop_timer: asyncio.TimerHandle | None = None


def _datagram_of_group(group: int) -> Callable[[bytes], bool]:
    def doomed(payload: bytes) -> bool:
        return live_datagrams.fragment_group(payload) == group

    return doomed


@dataclass(eq=False)  # identity: the channel keeps subscriptions in a set
class LiveSubscription:
    channel: LiveChannel
    session_id: int
    writer: GroupWriter
    rendition: int
    start_group: int
    keep_s: float
    counters: LiveCounters = field(default_factory=LiveCounters)
    # live.fec=K: groups as datagrams with one parity fragment per K data fragments of a chunk
    # (0: no parity, NACKs only), or "auto" (K from the loss); None: a stream per group.
    fec: LiveFec | None = None
    # The connection's (bytes sent, bytes lost), which live.fec=auto follows.
    loss_counts: LossCounts | None = None
    # Told the size of every chunk sent (the session's media byte counter).
    on_media_bytes: Callable[[int], None] | None = None

    def __post_init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        # (first group, rendition) pairs, ascending: a switch applies from a group boundary.
        self._schedule: list[tuple[int, int]] = [(self.start_group, self.rendition)]
        self._streams: dict[int, _GroupStream] = {}
        self._datagram_groups: dict[int, _DatagramGroup] = {}
        # group → rendition of the last GONE_MEMORY_GROUPS superseded datagram groups
        self._superseded: dict[int, int] = {}
        self._closed = False
        self._nack_logged_at = -math.inf
        self._started = False
        self._parity = parity_policy(self.fec, self.loss_counts) if self.fec is not None else None

    # --- ChunkSink ----------------------------------------------------------------------------

    def rendition_for(self, group: int) -> int | None:
        if self._closed or group < self._schedule[0][0]:
            return None
        rendition: int | None = None
        for first, r in self._schedule:
            if group >= first:
                rendition = r
        return rendition

    def on_chunk(self, group: int, chunk_index: int, final: bool) -> None:
        rendition = self.rendition_for(group)
        if rendition is None:
            return
        if self.fec is not None:
            self._send_datagrams(group, rendition, chunk_index, final)
            return
        stream = self._streams.get(group)
        if stream is None:
            stream = self._open(group, rendition)
        if stream.finished:
            return
        chunk, data = self.channel.chunk_bytes(stream.rendition, group, chunk_index)
        framed = protocol.encode_chunk(chunk.first_frame, chunk.frames, data)
        self.writer.send(stream.stream_id, framed, final)
        self._count_chunk(len(data))
        if final:
            self._finish(group, stream)
        self.writer.flush()

    # --- control ----------------------------------------------------------------------------

    def start(self) -> None:
        """Send what is already published of the groups wanted so far, then follow live
        (once; later calls do nothing)."""
        if self._started or self._closed:
            return
        self._started = True
        self.channel.add(self)
        edge = self.channel.live_edge_group()
        for group in range(self.start_group, edge + 1):
            rendition = self.rendition_for(group)
            if rendition is None:
                continue
            chunks = self.channel.chunks(rendition, group)
            published = self.channel.published_chunks(rendition, group)
            for index in range(published):
                self.on_chunk(group, index, index == len(chunks) - 1)

    def switch(self, rendition: int) -> int:
        """Use `rendition` from the next group not yet started; returns that group."""
        first = self.channel.live_edge_group()
        if first in self._streams or first in self._datagram_groups:
            first += 1
        first = max(first, self._schedule[0][0])
        self._schedule = [(g, r) for g, r in self._schedule if g < first] + [(first, rendition)]
        self.rendition = rendition
        return first

    def close(self) -> None:
        self._closed = True
        self.channel.remove(self)
        for stream in self._streams.values():
            if stream.drop_timer is not None:
                stream.drop_timer.cancel()
        self._streams.clear()
        for held in self._datagram_groups.values():
            if held.drop_timer is not None:
                held.drop_timer.cancel()
        self._datagram_groups.clear()

    # --- streams ----------------------------------------------------------------------------

    def _open(self, group: int, rendition: int) -> _GroupStream:
        stream_id = self.writer.open_uni_stream(self.session_id)
        self.writer.set_stream_priority(stream_id, group)
        first_frame = group * self.channel.frames_per_group
        header = protocol.LiveGroupHeader(rendition, group, self.channel.capture_us(first_frame))
        self.writer.send(stream_id, protocol.encode_group_header(header), False)
        stream = _GroupStream(stream_id, rendition)
        self._streams[group] = stream
        self.counters.groups_opened += 1
        return stream

    def _count_chunk(self, size: int) -> None:
        self.counters.chunks += 1
        self.counters.bytes += size
        if self.on_media_bytes is not None:
            self.on_media_bytes(size)

    def _finish(self, group: int, held: _GroupStream | _DatagramGroup) -> None:
        """Every chunk of `group` is queued: it is superseded `keep` after its last frame."""
        held.finished = True
        self.counters.groups_completed += 1
        self._arm_drop(group, held)

    def _arm_drop(self, group: int, held: _GroupStream | _DatagramGroup) -> None:
        last_frame = (group + 1) * self.channel.frames_per_group - 1
        at = self.channel.capture_mono(last_frame) + self.keep_s
        held.drop_timer = self._loop.call_at(at, self._supersede, group)

    def _supersede(self, group: int) -> None:
        if self.fec is not None:
            self._supersede_datagrams(group)
            return
        stream = self._streams.pop(group, None)
        if stream is None or self._closed:
            return
        if self.writer.has_unsent(stream.stream_id):
            self.writer.reset_stream(
                stream.stream_id, webtransport_error_code(protocol.LIVE_SUPERSEDED)
            )
            # A reset stream has no data left, only its RESET_STREAM frame: serve it first,
            # or newer groups filling every packet would starve it.
            self.writer.set_stream_priority(stream.stream_id, None)
            self.counters.groups_dropped += 1
            log.debug("session %d: group %d superseded, stream reset", self.session_id, group)
            self.writer.flush()

    # --- datagrams (live.fec) -------------------------------------------------------------

    def _send_datagrams(self, group: int, rendition: int, chunk_index: int, final: bool) -> None:
        assert self._parity is not None
        held = self._datagram_groups.get(group)
        if held is None:
            held = self._datagram_groups[group] = _DatagramGroup(rendition)
            self.counters.groups_opened += 1
        if held.finished:
            return
        chunk, data = self.channel.chunk_bytes(held.rendition, group, chunk_index)
        first_frame = group * self.channel.frames_per_group
        k = self._parity.k(self._loop.time())
        if k != self.counters.parity_k:
            self.counters.parity_changes += 1
            log.debug("session %d: parity K %d -> %d", self.session_id, self.counters.parity_k, k)
            self.counters.parity_k = k
        try:
            datagrams = live_datagrams.fragment_chunk(
                rendition=held.rendition, group=group,
                capture_us=self.channel.capture_us(first_frame), chunk_index=chunk_index,
                chunks_in_group=len(self.channel.chunks(held.rendition, group)),
                first_frame=chunk.first_frame, frames=chunk.frames, chunk=data, k=k)
        except live_datagrams.LiveDatagramError as exc:
            # Over the wire format's 16 MiB: the viewer NACKs it in vain, and gives the
            # group up like a superseded one.
            log.warning("session %d: group %d chunk %d not sent: %s", self.session_id, group,
                        chunk_index, exc)
            datagrams = []
        n = live_datagrams.data_fragment_count(len(data)) if datagrams else 0
        held.data_fragments[chunk_index] = datagrams[:n]
        for datagram in datagrams:
            self.writer.send_datagram(self.session_id, datagram)
        if datagrams:
            self.counters.datagrams_sent += len(datagrams)
            self.counters.parity_sent += len(datagrams) - n
            self._count_chunk(len(data))
        if final:
            self._finish(group, held)
        self.writer.flush()

    def _supersede_datagrams(self, group: int) -> None:
        held = self._datagram_groups.pop(group, None)
        if held is None or self._closed:
            return
        self._superseded[group] = held.rendition
        if len(self._superseded) > GONE_MEMORY_GROUPS:
            del self._superseded[min(self._superseded)]
        dropped = self.writer.drop_queued_datagrams(self.session_id, _datagram_of_group(group))
        if dropped:
            self.counters.fragments_dropped_unsent += dropped
            self.counters.groups_dropped += 1
            log.debug("session %d: group %d superseded, %d datagrams dropped unsent",
                      self.session_id, group, dropped)
            # The viewer cannot complete it: say so now, as a reset does on streams, rather
            # than let it NACK until it gives the group up.
            self._send_gone(held.rendition, group)

    def _send_gone(self, rendition: int, group: int) -> None:
        gone = live_datagrams.encode_gone(live_datagrams.LiveGone(rendition, group))
        self.writer.send_datagrams_first(self.session_id, [gone])
        self.counters.gones_sent += 1
        self.writer.flush()

    def on_nack(self, payload: bytes) -> None:
        """Send again, ahead of the queue and flagged, the data fragments a LIVE_NACK names
        (every one of the chunk for n = 0), or LIVE_GONE for a group superseded; anything else
        is counted and dropped: a datagram from the viewer must never raise into the
        connection."""
        self.counters.nacks_received += 1
        try:
            nack = live_datagrams.decode_nack(payload)
        except live_datagrams.LiveDatagramError as exc:
            self._ignore_nack(str(exc))
            return
        held = self._datagram_groups.get(nack.group) if not self._closed else None
        if held is None and not self._closed and self._superseded.get(nack.group) == nack.rendition:
            self._send_gone(nack.rendition, nack.group)  # its LIVE_GONE was lost, or not sent
            return
        if held is None or held.rendition != nack.rendition:
            self._ignore_nack(f"rendition {nack.rendition} group {nack.group} is not held "
                              f"(superseded, not sent, or another rendition)")
            return
        sent = held.data_fragments.get(nack.chunk_index)
        if not sent:
            self._ignore_nack(f"group {nack.group} chunk {nack.chunk_index} was not sent")
            return
        if nack.data_fragments == 0:
            wanted: Sequence[int] = range(len(sent))
        elif nack.data_fragments != len(sent):
            self._ignore_nack(f"group {nack.group} chunk {nack.chunk_index} has {len(sent)} "
                              f"data fragments, the NACK says {nack.data_fragments}")
            return
        else:
            wanted = nack.missing
        # A fragment still queued was not lost, only not sent yet (the NACK came early, e.g.
        # behind a large keyframe): it moves to the front as it is, and is not sent twice.
        named = {sent[i] for i in wanted}
        queued: set[bytes] = set()

        def still_queued(frame: bytes) -> bool:
            if frame in named:
                queued.add(frame)
                return True
            return False

        self.writer.drop_queued_datagrams(self.session_id, still_queued)
        again = [sent[i] if sent[i] in queued else live_datagrams.as_retransmission(sent[i])
                 for i in wanted]
        if again:
            self.writer.send_datagrams_first(self.session_id, again)
            self.counters.fragments_retransmitted += len(again) - len(queued)
            self.writer.flush()

    def _ignore_nack(self, reason: str) -> None:
        self.counters.nacks_ignored += 1
        now = time.monotonic()
        if now - self._nack_logged_at >= NACK_LOG_INTERVAL_S:
            self._nack_logged_at = now
            log.info("session %d: %d NACK(s) ignored so far; the latest: %s", self.session_id,
                     self.counters.nacks_ignored, reason)

"""One viewer's subscription to the live channel: a WebTransport stream per group.

Rules (shared/PROTOCOL.md, "Live"): each group goes on its own unidirectional stream, newer
groups are served first (stream priority = group sequence), and a group whose data is still
unsent `keep` after its last frame was captured is superseded: its stream is reset and nothing
more of it is sent ("send what is still useful").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from pccstream import protocol
from pccstream.server.live import LiveChannel

log = logging.getLogger("pccstream.live")

# WebTransport over HTTP/3 maps application error codes into the HTTP/3 error space
# (draft-ietf-webtrans-http3: 0x52e4a40fa8db + e + floor(e / 0x1e)).
_WT_ERROR_BASE = 0x52E4A40FA8DB


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


@dataclass
class LiveCounters:
    groups_opened: int = 0
    groups_completed: int = 0  # every chunk written and FIN queued
    groups_dropped: int = 0  # reset because superseded with data unsent
    chunks: int = 0
    bytes: int = 0


@dataclass
class _GroupStream:
    stream_id: int
    rendition: int
    finished: bool = False
    drop_timer: asyncio.TimerHandle | None = None


@dataclass(eq=False)  # identity: the channel keeps subscriptions in a set
class LiveSubscription:
    channel: LiveChannel
    session_id: int
    writer: GroupWriter
    rendition: int
    start_group: int
    keep_s: float
    counters: LiveCounters = field(default_factory=LiveCounters)
    # Told the size of every chunk sent (the session's media byte counter).
    on_media_bytes: Callable[[int], None] | None = None

    def __post_init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        # (first group, rendition) pairs, ascending: a switch applies from a group boundary.
        self._schedule: list[tuple[int, int]] = [(self.start_group, self.rendition)]
        self._streams: dict[int, _GroupStream] = {}
        self._closed = False
        self._started = False

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
        stream = self._streams.get(group)
        if stream is None:
            stream = self._open(group, rendition)
        if stream.finished:
            return
        chunk, data = self.channel.chunk_bytes(stream.rendition, group, chunk_index)
        framed = protocol.encode_chunk(chunk.first_frame, chunk.frames, data)
        self.writer.send(stream.stream_id, framed, final)
        self.counters.chunks += 1
        self.counters.bytes += len(data)
        if self.on_media_bytes is not None:
            self.on_media_bytes(len(data))
        if final:
            stream.finished = True
            self.counters.groups_completed += 1
            self._arm_drop(group, stream)
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
        if first in self._streams:
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

    def _arm_drop(self, group: int, stream: _GroupStream) -> None:
        last_frame = (group + 1) * self.channel.frames_per_group - 1
        at = self.channel.capture_mono(last_frame) + self.keep_s
        stream.drop_timer = self._loop.call_at(at, self._supersede, group)

    def _supersede(self, group: int) -> None:
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

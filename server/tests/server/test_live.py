"""The live channel: chunking, the live clock, subscriptions, priorities and superseded groups."""

from __future__ import annotations

import asyncio
import json
import struct
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection

from pccstream import live_datagrams, protocol
from pccstream.contracts import AUTO_FEC_MAX_K
from pccstream.emulator.relay import EmulatorProcess
from pccstream.errors import UserError
from pccstream.live_datagrams import ChunkAssembly, LiveDatagramType, LiveNack
from pccstream.media.ffmpeg import find_tools
from pccstream.media.ladder import parse_ladder
from pccstream.media.package import make_settings, synthesize
from pccstream.protocol import LIVE_EDGE, Kind, Request, Status
from pccstream.server import live_parity, stream_priority
from pccstream.server.live import LiveChannel
from pccstream.server.live_handler import LiveHandler
from pccstream.server.live_subscription import (
    GONE_MEMORY_GROUPS,
    LiveSubscription,
    _DatagramGroup,
    webtransport_error_code,
)
from pccstream.wt_client import SessionRefused, WebTransportClient

from ..media.helpers import quiet, requires_ffmpeg
from .conftest import running_server

FRAMES_PER_GROUP = 15


@pytest.fixture(scope="module")
def live_media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 s of synthetic video, two renditions, 0.5 s groups of one-frame chunks."""
    if requires_ffmpeg.args[0]:
        pytest.fail("ffmpeg is missing: run ./infra/bootstrap.sh")
    out = tmp_path_factory.mktemp("live") / "media"
    settings = make_settings(parse_ladder("300k,750k"), "h264", "30", "0.5", chunk_frames=1)
    synthesize(find_tools(), out, settings=settings, duration_s=2, force=False, report=quiet)
    return out


def _tfdt(chunk: bytes) -> int:
    at = chunk.find(b"tfdt")
    assert at > 0 and chunk[at + 4] == 1
    return struct.unpack_from(">Q", chunk, at + 8)[0]


# --- the channel's content --------------------------------------------------------------------


def test_chunks_are_single_frames_and_retimed_to_live_time(live_media: Path) -> None:
    channel = LiveChannel.open(live_media)
    assert channel.frames_per_group == FRAMES_PER_GROUP and channel.loop_groups == 4
    assert len(channel.renditions) == 2
    chunks = channel.chunks(1, 0)
    assert [c.first_frame for c in chunks] == list(range(FRAMES_PER_GROUP))
    assert all(c.frames == 1 for c in chunks)
    assert chunks[0].data[4:8] == b"moof"
    # group 9 is loop segment 1; frame 9·15 + 3 at 512 ticks per frame (timescale 15360)
    chunk, data = channel.chunk_bytes(1, 9, 3)
    assert chunk is channel.chunks(1, 1)[3]
    assert _tfdt(data) == (9 * FRAMES_PER_GROUP + 3) * 512
    assert len(data) == len(chunk.data)


def test_media_with_long_segments_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "vod"
    settings = make_settings(parse_ladder("300k"), "h264", "30", "1")
    synthesize(find_tools(), out, settings=settings, duration_s=2, force=False, report=quiet)
    with pytest.raises(UserError, match=r"segments are 1 s; live groups must be ≤ 0.5 s"):
        LiveChannel.open(out)


def test_media_that_is_not_mp4_is_refused_naming_the_file(fake_media: Path) -> None:
    doc = json.loads((fake_media / "manifest.json").read_text())
    doc["segment_seconds"] = 0.5
    doc["fps"] = 30
    for r in doc["renditions"]:
        for s in r["segments"]:
            s["duration_s"] = 0.5
    (fake_media / "manifest.json").write_text(json.dumps(doc))
    with pytest.raises(UserError, match="300k init segment"):
        LiveChannel.open(fake_media)


def test_chunk_frames_must_divide_a_segment() -> None:
    with pytest.raises(UserError, match="--chunk-frames 4"):
        make_settings(parse_ladder("300k"), "h264", "30", "0.5", chunk_frames=4)


# --- subscriptions without a network ------------------------------------------------------------


class FakeWriter:
    def __init__(self) -> None:
        self.streams: dict[int, bytearray] = {}
        self.ended: set[int] = set()
        self.resets: dict[int, int] = {}
        self.priorities: dict[int, int | None] = {}
        self.unsent = False
        self._next = 3
        # Datagrams queued and not yet "sent" (the fake sends nothing), next first.
        self.datagrams: deque[bytes] = deque()

    def open_uni_stream(self, session_id: int) -> int:
        self._next += 4
        self.streams[self._next] = bytearray()
        return self._next

    def send(self, stream_id: int, data: bytes, end_stream: bool) -> None:
        self.streams[stream_id] += data
        if end_stream:
            self.ended.add(stream_id)

    def flush(self) -> None:
        pass

    def reset_stream(self, stream_id: int, error_code: int) -> None:
        self.resets[stream_id] = error_code

    def has_unsent(self, stream_id: int) -> bool:
        return self.unsent

    def set_stream_priority(self, stream_id: int, priority: int | None) -> None:
        self.priorities[stream_id] = priority

    def send_datagram(self, session_id: int, payload: bytes) -> None:
        self.datagrams.append(payload)

    def send_datagrams_first(self, session_id: int, payloads: Sequence[bytes]) -> None:
        self.datagrams.extendleft(reversed(payloads))

    def drop_queued_datagrams(self, session_id: int, doomed: Callable[[bytes], bool]) -> int:
        kept = [d for d in self.datagrams if not doomed(d)]
        dropped = len(self.datagrams) - len(kept)
        self.datagrams = deque(kept)
        return dropped


def _parse_group(data: bytes) -> tuple[protocol.LiveGroupHeader, list[tuple[int, int, bytes]]]:
    header = protocol.decode_group_header(data)
    rest = bytearray(data[protocol.GROUP_HEADER_BYTES :])
    chunks = protocol.decode_chunks(rest)
    assert not rest
    return header, chunks


def test_subscription_follows_the_clock_and_supersedes_unsent_groups(live_media: Path) -> None:
    async def scenario() -> None:
        channel = LiveChannel.open(live_media)
        channel.start()
        await asyncio.sleep(0.2)  # 6 frames of group 0 are captured
        writer = FakeWriter()
        writer.unsent = True
        sub = LiveSubscription(channel, 0, writer, rendition=0, start_group=0, keep_s=0.1)
        sub.start()
        (first,) = writer.streams
        assert len(_parse_group(bytes(writer.streams[first]))[1]) >= 5  # the burst so far
        await asyncio.sleep(1.05)  # group 0 complete at 0.467 s, superseded at 0.567 s
        sub.close()
        channel.close()
        header, chunks = _parse_group(bytes(writer.streams[first]))
        assert header.group == 0 and header.rendition == 0
        assert header.capture_us == channel.epoch_us
        assert [c[0] for c in chunks] == list(range(FRAMES_PER_GROUP))
        assert first in writer.ended
        assert writer.resets[first] == webtransport_error_code(protocol.LIVE_SUPERSEDED)
        assert writer.priorities[first] is None  # reset: its RESET_STREAM goes first
        groups = [_parse_group(bytes(d))[0] for d in writer.streams.values()]
        assert [g.group for g in groups] == [0, 1, 2]
        assert groups[2].capture_us - channel.epoch_us == 1_000_000
        assert sub.counters.groups_dropped == 2  # groups 0 and 1
        assert sub.counters.chunks >= 2 * FRAMES_PER_GROUP + 1

    asyncio.run(scenario())


def test_sent_groups_are_not_reset_and_switches_apply_at_the_next_group(live_media: Path) -> None:
    async def scenario() -> None:
        channel = LiveChannel.open(live_media)
        channel.start()
        writer = FakeWriter()
        sub = LiveSubscription(channel, 0, writer, rendition=0, start_group=0, keep_s=0.0)
        sub.start()
        await asyncio.sleep(0.1)
        assert sub.switch(1) == 1  # group 0 is under way in rendition 0
        await asyncio.sleep(0.6)
        sub.close()
        channel.close()
        groups = [_parse_group(bytes(d))[0] for d in writer.streams.values()]
        assert [(g.group, g.rendition) for g in groups] == [(0, 0), (1, 1)]
        assert writer.resets == {}
        assert sub.counters.groups_dropped == 0

    asyncio.run(scenario())


# --- datagrams (live.fec) -----------------------------------------------------------------------


def _fragments(datagrams: Sequence[bytes]) -> list[tuple[live_datagrams.FragmentHeader, bytes]]:
    return [live_datagrams.decode_fragment(d) for d in datagrams]


def _reassemble(datagrams: Sequence[bytes]) -> dict[tuple[int, int, int], bytes]:
    """Every complete chunk among `datagrams`, by (rendition, group, chunk index)."""
    assemblies: dict[tuple[int, int, int], ChunkAssembly] = {}
    for header, payload in _fragments(datagrams):
        assembly = assemblies.setdefault(header.chunk_key, ChunkAssembly(header))
        assembly.add(header, payload)
    return {key: chunk for key, a in assemblies.items() if (chunk := a.chunk()) is not None}


def test_datagram_mode_sends_data_then_parity_per_chunk_and_no_stream(live_media: Path) -> None:
    async def scenario() -> None:
        channel = LiveChannel.open(live_media)
        channel.start()
        await asyncio.sleep(0.2)
        writer = FakeWriter()
        media_bytes: list[int] = []
        sub = LiveSubscription(channel, 0, writer, rendition=1, start_group=0, keep_s=10.0,
                               on_media_bytes=media_bytes.append, fec=2)
        sub.start()
        await asyncio.sleep(0.35)  # group 0 complete at 0.467 s
        sub.close()
        channel.close()
        assert writer.streams == {}
        fragments = _fragments(writer.datagrams)
        group0 = [(h, p) for h, p in fragments if h.group == 0]
        # per chunk, in publishing order: data 0..n-1, then parity 0..m-1
        order = [(h.chunk_index, h.kind, h.index) for h, _ in group0]
        expected = []
        for c in range(FRAMES_PER_GROUP):
            n = live_datagrams.data_fragment_count(len(channel.chunk_bytes(1, 0, c)[1]))
            m = -(-n // 2)
            expected += [(c, LiveDatagramType.LIVE_DATA, i) for i in range(n)]
            expected += [(c, LiveDatagramType.LIVE_PARITY, p) for p in range(m)]
        assert order == expected
        header = group0[0][0]
        assert (header.rendition, header.chunks_in_group, header.capture_us) == (
            1, FRAMES_PER_GROUP, channel.epoch_us)
        chunks = _reassemble(writer.datagrams)
        for c in range(FRAMES_PER_GROUP):
            assert chunks[(1, 0, c)] == channel.chunk_bytes(1, 0, c)[1]
        parity = sum(1 for h, _ in fragments if h.kind == LiveDatagramType.LIVE_PARITY)
        assert sub.counters.datagrams_sent == len(fragments)
        assert sub.counters.parity_sent == parity > 0
        assert sum(media_bytes) == sub.counters.bytes == sum(
            len(channel.chunk_bytes(1, h.group, h.chunk_index)[1])
            for h, _ in fragments if h.kind == LiveDatagramType.LIVE_DATA and h.index == 0)
        assert sub.counters.groups_completed == 1

    asyncio.run(scenario())


def test_auto_parity_starts_on_falls_to_one_per_chunk_on_a_clean_path_and_comes_back_with_a_loss(
    live_media: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_parity, "LOSS_MEMORY_S", 0.3)

    async def scenario() -> None:
        channel = LiveChannel.open(live_media)
        channel.start()
        writer = FakeWriter()
        counts = [0, 0]  # bytes sent, bytes lost
        sub = LiveSubscription(channel, 0, writer, rendition=1, start_group=0, keep_s=10.0,
                               fec="auto", loss_counts=lambda: (counts[0], counts[1]))
        sub.start()
        await asyncio.sleep(0.1)
        assert sub.counters.parity_k == AUTO_FEC_MAX_K and sub.counters.parity_sent > 0
        counts[0] = 1_000_000
        await asyncio.sleep(0.5)  # 0.3 s without a loss: one parity fragment per chunk
        assert sub.counters.parity_k == live_parity.FLOOR_K
        floor_at = sub.counters.parity_sent
        await asyncio.sleep(0.2)
        assert sub.counters.parity_sent > floor_at  # still sent
        counts[0], counts[1] = 2_000_000, 1_200  # one packet lost
        await asyncio.sleep(0.3)
        sub.close()
        channel.close()
        assert sub.counters.parity_k == AUTO_FEC_MAX_K and sub.counters.parity_changes == 3

    asyncio.run(scenario())


def _gones(datagrams: Sequence[bytes]) -> list[live_datagrams.LiveGone]:
    return [live_datagrams.decode_gone(d) for d in datagrams
            if d[0] == live_datagrams.LiveDatagramType.LIVE_GONE]


def test_superseded_groups_lose_their_queued_datagrams_and_the_viewer_is_told(
    live_media: Path,
) -> None:
    async def scenario() -> None:
        channel = LiveChannel.open(live_media)
        channel.start()
        writer = FakeWriter()
        sub = LiveSubscription(channel, 0, writer, rendition=0, start_group=0, keep_s=0.1, fec=4)
        sub.start()
        await asyncio.sleep(1.15)  # groups 0 and 1 superseded (the fake never sends)
        fragments = [d for d in writer.datagrams if live_datagrams.fragment_group(d) is not None]
        assert {live_datagrams.fragment_group(d) for d in fragments} == {2}
        assert sub.counters.groups_dropped == 2
        assert sub.counters.fragments_dropped_unsent == sub.counters.datagrams_sent - len(fragments)
        # Each LIVE_GONE went ahead of the queue: the newest supersede first.
        assert _gones(list(writer.datagrams)[:2]) == [live_datagrams.LiveGone(0, 1),
                                                      live_datagrams.LiveGone(0, 0)]
        assert sub.counters.gones_sent == 2
        # A NACK for a superseded group is answered LIVE_GONE again (the first may be lost) ...
        writer.datagrams.clear()
        sub.on_nack(live_datagrams.encode_nack(LiveNack(0, 0, 0, 0)))
        assert _gones(writer.datagrams) == [live_datagrams.LiveGone(0, 0)]
        assert sub.counters.nacks_ignored == 0
        # ... but not for a rendition that group was not sent in.
        sub.on_nack(live_datagrams.encode_nack(LiveNack(1, 0, 0, 0)))
        assert sub.counters.nacks_ignored == 1 and sub.counters.gones_sent == 3
        sub.close()
        channel.close()

    asyncio.run(scenario())


def test_only_the_last_superseded_groups_are_remembered(live_media: Path) -> None:
    async def scenario() -> None:
        channel = LiveChannel.open(live_media)
        writer = FakeWriter()
        sub = LiveSubscription(channel, 0, writer, rendition=0, start_group=0, keep_s=0.1, fec=4)
        last = GONE_MEMORY_GROUPS + 5
        for group in range(last + 1):
            sub._datagram_groups[group] = _DatagramGroup(0)
            sub._supersede(group)
        assert sub.counters.gones_sent == 0  # nothing was queued: nothing to tell at once
        sub.on_nack(live_datagrams.encode_nack(LiveNack(0, last, 0, 0)))
        sub.on_nack(live_datagrams.encode_nack(LiveNack(0, 0, 0, 0)))  # long forgotten
        assert sub.counters.gones_sent == 1 and sub.counters.nacks_ignored == 1
        sub.close()
        channel.close()

    asyncio.run(scenario())


async def _sent_group_zero(
    live_media: Path, fec: int
) -> tuple[LiveChannel, FakeWriter, LiveSubscription]:
    channel = LiveChannel.open(live_media)
    channel.start()
    await asyncio.sleep(0.5)  # group 0 complete
    writer = FakeWriter()
    sub = LiveSubscription(channel, 0, writer, rendition=0, start_group=0, keep_s=10.0, fec=fec)
    sub.start()
    return channel, writer, sub


def test_a_nack_resends_exactly_the_missing_fragments_first_and_flagged(
    live_media: Path,
) -> None:
    async def scenario() -> None:
        channel, writer, sub = await _sent_group_zero(live_media, fec=0)
        first_chunk = [d for d in writer.datagrams
                       if live_datagrams.decode_fragment(d)[0].chunk_key == (0, 0, 0)]
        n = len(first_chunk)
        assert n >= 2  # the keyframe chunk spans fragments
        writer.datagrams = deque([b"queued before"])
        sub.on_nack(live_datagrams.encode_nack(LiveNack(0, 0, 0, n, (0, n - 1))))
        again = list(writer.datagrams)[:2]
        assert list(writer.datagrams)[2:] == [b"queued before"]
        assert again == [live_datagrams.as_retransmission(first_chunk[i]) for i in (0, n - 1)]
        assert all(h.retransmission for h, _ in _fragments(again))
        # n = 0: every data fragment of the chunk
        writer.datagrams.clear()
        sub.on_nack(live_datagrams.encode_nack(LiveNack(0, 0, 0, 0)))
        assert list(writer.datagrams) == [live_datagrams.as_retransmission(d)
                                          for d in first_chunk]
        assert sub.counters.nacks_received == 2
        assert sub.counters.fragments_retransmitted == 2 + n
        assert sub.counters.nacks_ignored == 0
        sub.close()
        channel.close()

    asyncio.run(scenario())


def test_a_nack_for_a_fragment_still_queued_moves_it_forward_unflagged(live_media: Path) -> None:
    async def scenario() -> None:
        channel, writer, sub = await _sent_group_zero(live_media, fec=0)
        first_chunk = [d for d in writer.datagrams
                       if live_datagrams.decode_fragment(d)[0].chunk_key == (0, 0, 0)]
        n = len(first_chunk)
        # Fragment 0 went out; the rest are still queued behind something else.
        writer.datagrams = deque([b"queued before", *first_chunk[1:]])
        sub.on_nack(live_datagrams.encode_nack(LiveNack(0, 0, 0, n, (0, n - 1))))
        assert list(writer.datagrams) == [
            live_datagrams.as_retransmission(first_chunk[0]), first_chunk[n - 1],
            b"queued before", *first_chunk[1:n - 1]]
        assert sub.counters.fragments_retransmitted == 1
        sub.close()
        channel.close()

    asyncio.run(scenario())


def test_nacks_for_what_is_not_held_are_counted_and_ignored(live_media: Path) -> None:
    async def scenario() -> None:
        channel, writer, sub = await _sent_group_zero(live_media, fec=4)
        writer.datagrams.clear()
        bad = [
            live_datagrams.encode_nack(LiveNack(0, 7, 0, 0)),  # a group never sent
            live_datagrams.encode_nack(LiveNack(1, 0, 0, 0)),  # another rendition
            live_datagrams.encode_nack(LiveNack(0, 0, 99, 0)),  # no such chunk
            live_datagrams.encode_nack(LiveNack(0, 0, 0, 200, (1,))),  # wrong n
            b"\x03\x00",  # truncated
            live_datagrams.encode_nack(LiveNack(0, 0, 0, 9, (1,))) + b"\x00",  # bitmap too long
        ]
        for payload in bad:
            sub.on_nack(payload)
        assert not writer.datagrams
        assert sub.counters.nacks_ignored == sub.counters.nacks_received == len(bad)
        sub.close()
        channel.close()

    asyncio.run(scenario())


def test_the_handler_drops_datagrams_that_are_not_nacks(live_media: Path) -> None:
    async def scenario() -> None:
        channel = LiveChannel.open(live_media)
        channel.start()
        writer = FakeWriter()
        handler = LiveHandler(live=channel, session_id=0, writer=writer, keep_s=None,
                              on_media_bytes=lambda size: None, fec=1)
        handler.on_datagram(live_datagrams.encode_nack(LiveNack(0, 0, 0, 0)))  # no subscription
        request = Request(Kind.SUBSCRIBE, 0, LIVE_EDGE)
        handler.body(request)
        handler.answered(request)
        await asyncio.sleep(0.1)  # a few chunks are published
        for payload in (b"", b"\x01" * 40, b"\xff"):
            handler.on_datagram(payload)
        handler.on_datagram(live_datagrams.encode_nack(LiveNack(0, 0, 0, 0)))  # a NACK: passed
        info = handler.info()
        assert info["live_datagrams_dropped"] == handler.datagrams_dropped == 4
        assert info["live_nacks_received"] == 1 and info["live_fec"] == 1
        assert info["live_datagrams_sent"] > 0
        # The fake never sends: the NACKed fragments were still queued, so they moved forward.
        assert info["live_fragments_retransmitted"] == 0
        handler.close()
        channel.close()

    asyncio.run(scenario())


# --- priorities -----------------------------------------------------------------------------


def test_priorities_serve_unprioritized_then_newest_first() -> None:
    quic = QuicConnection(configuration=QuicConfiguration(is_client=True))
    ids = [quic.get_next_available_stream_id(is_unidirectional=True) for _ in range(1)]
    for stream_id in range(2, 40, 4):
        quic.send_stream_data(stream_id, b"x")
        ids.append(stream_id)
    stream_priority.set_priority(quic, 6, 10)
    stream_priority.set_priority(quic, 10, 12)
    stream_priority.set_priority(quic, 14, 11)
    order = [s.stream_id for s in quic._streams_queue]
    assert order[-3:] == [10, 14, 6]
    assert set(order[:-3]) == set(range(2, 40, 4)) - {6, 10, 14}
    assert type(quic).__name__ == "OrderedQuicConnection"
    stream_priority.set_priority(quic, 10, None)
    assert [s.stream_id for s in quic._streams_queue][-2:] == [14, 6]
    assert stream_priority.has_unsent(quic, 14)
    assert not stream_priority.has_unsent(quic, 999)


# --- over QUIC ------------------------------------------------------------------------------


async def _live_info(client: WebTransportClient) -> dict[str, Any]:
    response = await client.get(Request(Kind.LIVE_INFO))
    assert response.header.status == Status.OK
    return json.loads(response.body)


def test_live_over_quic(fake_media: Path, live_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "s", live_media=live_media) as server:
            await asyncio.sleep(0.6)
            async with WebTransportClient.open("127.0.0.1", server.quic_port) as client:
                info = await _live_info(client)
                assert info["frames_per_group"] == 15 and info["loop_frames"] == 60
                assert info["live_edge_group"] == 1
                assert [r["id"] for r in info["renditions"]] == ["300k", "750k"]
                init = await client.get(Request(Kind.LIVE_INIT, 1))
                assert init.body == (live_media / "750k" / "init.mp4").read_bytes()
                sub = await client.get(Request(Kind.SUBSCRIBE, 1, LIVE_EDGE))
                assert json.loads(sub.body) == {"start_group": 1, "rendition": 1}
                await asyncio.sleep(1.2)
                groups = client.live_groups
                assert [g.header.group for g in groups[:3]] == [1, 2, 3]
                done = [g for g in groups if g.ended]
                assert len(done) >= 2 and all(g.frames == 15 for g in done)
                # frames arrive as captured: the chunks of a whole group span ~14 frame times
                second = groups[1].chunks
                assert 0.35 < second[-1][3] - second[0][3] < 0.6
                assert all(not g.reset for g in groups)
                assert server.sessions_info()[-1]["live_groups_opened"] >= 3

    asyncio.run(scenario())


def test_live_over_datagrams_over_quic(fake_media: Path, live_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "s", live_media=live_media) as server:
            channel = server.live
            assert channel is not None
            # keep: the NACKed group is still held when the NACK comes
            params = {"live.fec": "4", "live.keep_ms": "3000"}
            async with WebTransportClient.open("127.0.0.1", server.quic_port,
                                               params=params) as client:
                sub = await client.get(Request(Kind.SUBSCRIBE, 1, LIVE_EDGE))
                start = json.loads(sub.body)["start_group"]
                await asyncio.sleep(1.0)
                received: list[bytes] = []
                while not client.datagrams.empty():
                    received.append(client.datagrams.get_nowait())
                assert client.live_groups == []  # no LIVE_GROUP stream
                chunks = _reassemble(received)
                assert len(chunks) >= FRAMES_PER_GROUP
                for (rendition, group, index), chunk in chunks.items():
                    assert rendition == 1 and group >= start
                    assert chunk == channel.chunk_bytes(1, group, index)[1]
                headers = [h for h, _ in _fragments(received)]
                assert any(h.kind == LiveDatagramType.LIVE_PARITY for h in headers)
                # ask for the first chunk's data fragments again: they come back flagged
                first = headers[0]
                client.send_datagram(live_datagrams.encode_nack(
                    LiveNack(first.rendition, first.group, first.chunk_index, 0)))
                again: list[live_datagrams.FragmentHeader] = []
                deadline = time.monotonic() + 2.0
                while len(again) < first.data_fragments and time.monotonic() < deadline:
                    header, _ = live_datagrams.decode_fragment(
                        await asyncio.wait_for(client.datagrams.get(), 2.0))
                    if header.retransmission:
                        again.append(header)
                assert [(h.chunk_key, h.index) for h in again] == [
                    (first.chunk_key, i) for i in range(first.data_fragments)]
                info = server.sessions_info()[-1]
                assert info["live_fec"] == 4 and info["live_groups_opened"] >= 2
                assert info["live_nacks_received"] == 1
                assert info["live_fragments_retransmitted"] == first.data_fragments
                assert info["live_datagrams_sent"] >= len(received)

    asyncio.run(scenario())


def test_auto_parity_over_a_lossless_quic_connection_falls_to_one_per_chunk(
    fake_media: Path, live_media: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_parity, "LOSS_MEMORY_S", 0.3)

    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "s", live_media=live_media) as server:
            async with WebTransportClient.open("127.0.0.1", server.quic_port,
                                               params={"live.fec": "auto"}) as client:
                await client.get(Request(Kind.SUBSCRIBE, 1, LIVE_EDGE))
                await asyncio.sleep(0.6)
                info = server.sessions_info()[-1]
                assert info["live_fec"] == "auto" and info["live_datagrams_sent"] > 0
                # K = 8 while the path was unknown, one per chunk once it had not lost for 0.3 s
                assert info["live_parity_sent"] > 0
                assert info["live_parity_k"] == live_parity.FLOOR_K
                assert info["live_parity_changes"] == 2
                assert not client.live_groups

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("request_", "status", "message"),
    [
        (Request(Kind.LIVE_INIT, 7), Status.UNKNOWN_RENDITION, "live rendition 7 does not exist"),
        (Request(Kind.SUBSCRIBE, 9, LIVE_EDGE), Status.UNKNOWN_RENDITION, "live rendition 9"),
        (Request(Kind.SUBSCRIBE, 0, 0), Status.UNAVAILABLE, "group 0 is gone"),
    ],
)
def test_bad_live_requests(
    fake_media: Path, live_media: Path, tmp_path: Path, request_: Request, status: Status,
    message: str,
) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "s", live_media=live_media) as server:
            await asyncio.sleep(1.1)  # live edge: group 2
            async with WebTransportClient.open("127.0.0.1", server.quic_port) as client:
                response = await client.get(request_)
                assert response.header.status == status
                assert message in response.body.decode()
                assert (await _live_info(client))["live_edge_group"] >= 2

    asyncio.run(scenario())


def test_no_live_channel_is_unavailable(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "s") as server:
            async with WebTransportClient.open("127.0.0.1", server.quic_port) as client:
                response = await client.get(Request(Kind.LIVE_INFO))
                assert response.header.status == Status.UNAVAILABLE
                assert "--live-media" in response.body.decode()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"live.keep_ms": "-1"}, "live.keep_ms='-1'"),
        ({"live.keep_ms": "soon"}, "live.keep_ms='soon'"),
        ({"live.bogus": "1"}, "unknown live parameter 'live.bogus'"),
        ({"live.fec": "65"}, "live.fec='65': expected an integer from 0 (no parity) to 64"),
        ({"live.fec": "-1"}, "live.fec='-1'"),
        ({"live.fec": "two"}, "live.fec='two'"),
        ({"live.fec": ""}, "live.fec=''"),
    ],
)
def test_bad_live_session_parameters(
    fake_media: Path, tmp_path: Path, query: dict[str, str], message: str
) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "s") as server:
            with pytest.raises(SessionRefused) as refused:
                async with WebTransportClient.open("127.0.0.1", server.quic_port, params=query):
                    pass
            assert refused.value.status == 400 and message in refused.value.reason

    asyncio.run(scenario())


def test_a_slow_link_gets_superseded_groups_dropped(
    fake_media: Path, live_media: Path, tmp_path: Path
) -> None:
    """750 kbit/s rendition through a 400 kbit/s link: the server cannot keep up, so groups
    older than `keep` are reset instead of queueing ever more delay."""

    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "s", live_media=live_media) as server:
            emulator = EmulatorProcess(
                upstream=f"127.0.0.1:{server.quic_port}", down="0.4mbit", up="10mbit",
                delay_ms=10, queue="40 kB",
            )
            port = await emulator.start()
            try:
                params = {"live.keep_ms": "200"}
                async with WebTransportClient.open("127.0.0.1", port, cc="bbr", params=params) as c:
                    await c.get(Request(Kind.SUBSCRIBE, 1, LIVE_EDGE))
                    started = time.monotonic()
                    await asyncio.sleep(4.0)
                    groups = c.live_groups
                    received = [(g.header.group, g.frames) for g in groups]
                    assert any(g.reset for g in groups), received
                    info = server.sessions_info()[-1]
                    assert info["live_groups_dropped"] >= 1
                    # the newest group keeps arriving: data is never more than ~1.5 s stale
                    newest = max(g.header.group for g in groups if g.chunks)
                    elapsed_groups = (time.monotonic() - started) / 0.5
                    assert newest >= elapsed_groups - 3
            finally:
                await emulator.close()

    asyncio.run(scenario())

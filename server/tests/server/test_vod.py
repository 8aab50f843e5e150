"""The VOD handler's media lookup: reads off the event loop, the withhold test hook as a
wrapper around the lookup, and segments written chunk by chunk as they are read."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

from pccstream.protocol import Kind, Request, Status, decode_response_header, encode_request
from pccstream.server.session import ViewerSession
from pccstream.server.vod import (
    Body,
    VodHandler,
    WithholdHook,
    WithholdingLookup,
    off_the_loop,
    read_pieces,
)


class _ThreadRecordingMedia:
    def __init__(self) -> None:
        self.threads: list[int] = []

    def body(self, request: Request) -> Body:
        self.threads.append(threading.get_ident())
        return Body.of(b"x" * request.segment)


def test_disk_reads_run_off_the_event_loop_thread() -> None:
    media = _ThreadRecordingMedia()

    async def scenario() -> bytes:
        return (await off_the_loop(media)(Request(Kind.SEGMENT, 0, 3))).read_all()

    assert asyncio.run(scenario()) == b"xxx"
    assert media.threads and media.threads[0] != threading.get_ident()


class _TwoPieceMedia:
    """Two pieces, each read noting its thread; closed flags the reader was closed."""

    def __init__(self) -> None:
        self.reads: list[int] = []
        self.closed = False

    def body(self, request: Request) -> Body:
        def pieces() -> Iterator[bytes]:
            try:
                for piece in (b"ab", b"cd"):
                    self.reads.append(threading.get_ident())
                    yield piece
            finally:
                self.closed = True

        return Body(4, pieces())


def test_the_first_piece_is_read_in_the_lookups_thread() -> None:
    # The first chunk of a segment is ready when the lookup returns: no second thread hop.
    media = _TwoPieceMedia()

    async def scenario() -> tuple[Body, list[bytes]]:
        body = await off_the_loop(media)(Request(Kind.SEGMENT, 0, 0))
        assert len(media.reads) == 1 and media.reads[0] != threading.get_ident()
        return body, [piece async for piece in read_pieces(body)]

    body, pieces = asyncio.run(scenario())
    assert body.head == (b"ab",) and pieces == [b"ab", b"cd"]
    assert media.closed


def test_a_body_read_in_part_closes_its_reader() -> None:
    media = _TwoPieceMedia()

    async def scenario() -> None:
        body = await off_the_loop(media)(Request(Kind.SEGMENT, 0, 0))
        pieces = read_pieces(body)
        assert await anext(pieces) == b"ab"
        await pieces.aclose()  # a closed session stops reading

    asyncio.run(scenario())
    assert media.closed and len(media.reads) == 1


def test_whole_bodies_need_no_read() -> None:
    body = Body.of(b"manifest")
    assert body.head == (b"manifest",) and body.read_all() == b"manifest"
    assert Body.of(b"").head == ()


def test_withholding_starts_at_the_segment_and_holds_every_body_once() -> None:
    async def lookup(request: Request) -> Body:
        return Body.of(bytes([request.segment]))

    async def scenario() -> list[tuple[int, float]]:
        loop = asyncio.get_running_loop()
        withheld = WithholdingLookup(lookup, WithholdHook(at_segment=2, seconds=0.2),
                                     session_id=1)
        start = loop.time()
        timings = []
        for kind, segment in [(Kind.SEGMENT, 1), (Kind.SEGMENT, 2), (Kind.MANIFEST, 0),
                              (Kind.SEGMENT, 5)]:
            body = (await withheld(Request(kind, 0, segment))).read_all()
            timings.append((body[0], loop.time() - start))
        return timings

    timings = asyncio.run(scenario())
    assert [segment for segment, _ in timings] == [1, 2, 0, 5]
    assert timings[0][1] < 0.1  # before the hook's segment: at once
    assert 0.19 <= timings[1][1] < 0.4  # the hook's segment waits the whole window
    assert timings[3][1] - timings[1][1] < 0.1  # once: later bodies are not held again


class _Writer:
    """Records what the session writes, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int, bytes, bool]] = []

    def send(self, stream_id: int, data: bytes, end_stream: bool) -> None:
        self.events.append(("send", stream_id, data, end_stream))

    def flush(self) -> None:
        pass

    def open_uni_stream(self, session_id: int) -> int:
        return 3

    def reset_stream(self, stream_id: int, error_code: int) -> None:
        self.events.append(("reset", stream_id, b"", False))

    def has_unsent(self, stream_id: int) -> bool:
        return False

    def set_stream_priority(self, stream_id: int, priority: int | None) -> None:
        pass

    def boost_written(self, stream_id: int, priority: int) -> None:
        self.events.append(("boost", stream_id, b"", False))


class _ChunkedMedia:
    """A segment of three chunks; `log` shows each read next to the writes."""

    def __init__(self, writer: _Writer, pieces: list[bytes], length: int | None = None) -> None:
        self.writer = writer
        self.pieces = pieces
        self.length = sum(map(len, pieces)) if length is None else length

    def body(self, request: Request) -> Body:
        def read() -> Iterator[bytes]:
            for piece in self.pieces:
                self.writer.events.append(("read", 0, piece, False))
                yield piece

        return Body(self.length, read())


Event = tuple[str, int, bytes, bool]


def _serve(media_pieces: list[bytes], length: int | None = None) -> list[Event]:
    async def scenario() -> list[Event]:
        writer = _Writer()
        session = ViewerSession(
            session_id=0, media=_ChunkedMedia(writer, media_pieces, length), writer=writer,
            cc_name="cubic", cc_params={}, telemetry_source=lambda: None)
        session.on_stream_data(4, encode_request(Request(Kind.SEGMENT, 0, 1)), True)
        for _ in range(100):
            await asyncio.sleep(0.01)
            if any(e[3] or e[0] == "reset" for e in writer.events):
                break
        session.close()
        return writer.events

    return asyncio.run(scenario())


def test_a_segment_goes_out_chunk_by_chunk_as_it_is_read() -> None:
    chunks = [b"a" * 10, b"b" * 20, b"c" * 5]
    events = _serve(chunks)
    kinds = [(e[0], e[2]) for e in events]
    # The first chunk is read with the lookup, before the header goes out; then each chunk
    # is written before the next one is read: no whole-segment buffering.
    assert kinds[0] == ("read", chunks[0])
    header = decode_response_header(events[1][2])
    assert header.status == Status.OK and header.body_length == 35
    # The session's first segment: its header and first chunk go before the manifest.
    assert kinds[2:] == [("send", chunks[0]), ("boost", b""), ("read", chunks[1]),
                         ("send", chunks[1]), ("read", chunks[2]), ("send", chunks[2]),
                         ("send", b"")]
    assert events[-1][3] is True  # FIN after the last chunk


def test_a_body_shorter_than_announced_resets_the_stream() -> None:
    events = _serve([b"a" * 10], length=30)
    assert events[-1][0] == "reset"
    assert not any(e[3] for e in events)  # never a FIN: the viewer sees an error, not a short body


def test_the_manifest_goes_after_the_first_chunk_and_before_the_rest_of_the_segments() -> None:
    priorities: dict[int, int | None] = {}
    boosts: dict[int, int] = {}

    class Recorder:
        def set_stream_priority(self, stream_id: int, priority: int | None) -> None:
            priorities[stream_id] = priority

        def boost_written(self, stream_id: int, priority: int) -> None:
            boosts[stream_id] = priority

    async def lookup(request: Request) -> Body:
        return Body.of(b"")

    handler = VodHandler(lookup, Recorder())
    requests = [(0, Request(Kind.MANIFEST, 0, 0)), (4, Request(Kind.INIT, 0, 0)),
                (8, Request(Kind.SEGMENT, 0, 0)), (12, Request(Kind.SEGMENT, 0, 1))]
    for stream_id, request in requests:
        handler.prioritize(stream_id, request)
        handler.first_piece_written(stream_id, request)
    # Higher is served first; INIT has none (before every prioritized stream). Only the
    # session's first segment has its first chunk ahead of the manifest.
    assert 4 not in priorities
    assert (priorities[0], priorities[8], priorities[12]) == (1, 0, -1)
    assert boosts == {8: 2}
    assert boosts[8] > priorities[0] > priorities[8]


class _StreamNumberingWriter(_Writer):
    """A writer whose unidirectional streams get distinct ids (3, 7, 11, ...)."""

    def __init__(self) -> None:
        super().__init__()
        self.next_uni = 3

    def open_uni_stream(self, session_id: int) -> int:
        stream_id = self.next_uni
        self.next_uni += 4
        return stream_id


def test_vod_first_pushes_init_then_segment_each_on_its_own_stream() -> None:
    class _Media:
        def body(self, request: Request) -> Body:
            return Body.of(f"{request.kind.name}:{request.rendition}:{request.segment}".encode())

    async def scenario() -> list[Event]:
        writer = _StreamNumberingWriter()
        session = ViewerSession(
            session_id=0, media=_Media(), writer=writer, cc_name="cubic", cc_params={},
            telemetry_source=lambda: None, vod_first=(1, 0))
        session.start()
        for _ in range(100):
            await asyncio.sleep(0.01)
            if sum(1 for e in writer.events if e[3]) >= 2:
                break
        session.close()
        return writer.events

    events = asyncio.run(scenario())
    telemetry_stream = 3  # opened by start() before the pushes
    by_stream: dict[int, bytes] = {}
    ended: set[int] = set()
    for kind, stream_id, data, end in events:
        if kind == "send" and stream_id != telemetry_stream:
            by_stream[stream_id] = by_stream.get(stream_id, b"") + data
            if end:
                ended.add(stream_id)
    assert sorted(by_stream) == [7, 11] and ended == {7, 11}
    expected = ((Kind.INIT, b"INIT:1:0"), (Kind.SEGMENT, b"SEGMENT:1:0"))
    for stream_id, (kind, body) in zip((7, 11), expected, strict=True):
        data = by_stream[stream_id]
        assert data[0] == 4  # UniStreamType.PUSHED_RESPONSE
        header = decode_response_header(data[1:25])
        assert (header.status, header.kind, header.rendition) == (Status.OK, kind, 1)
        assert data[25:] == body


def test_vod_manifest_pushes_the_manifest() -> None:
    class _Media:
        def body(self, request: Request) -> Body:
            return Body.of(b"{}" if request.kind == Kind.MANIFEST else b"x")

    async def scenario() -> list[Event]:
        writer = _StreamNumberingWriter()
        session = ViewerSession(
            session_id=0, media=_Media(), writer=writer, cc_name="cubic", cc_params={},
            telemetry_source=lambda: None, vod_manifest=True)
        session.start()
        for _ in range(100):
            await asyncio.sleep(0.01)
            if any(e[3] for e in writer.events):
                break
        session.close()
        return writer.events

    data = b"".join(e[2] for e in asyncio.run(scenario()) if e[0] == "send" and e[1] == 7)
    assert data[0] == 4
    header = decode_response_header(data[1:25])
    assert (header.status, header.kind) == (Status.OK, Kind.MANIFEST) and data[25:] == b"{}"


def test_without_vod_first_nothing_is_pushed() -> None:
    async def scenario() -> list[Event]:
        writer = _StreamNumberingWriter()
        session = ViewerSession(
            session_id=0, media=_ChunkedMedia(writer, [b"x"]), writer=writer, cc_name="cubic",
            cc_params={}, telemetry_source=lambda: None)
        session.start()
        await asyncio.sleep(0.05)
        session.close()
        return writer.events

    assert {e[1] for e in asyncio.run(scenario()) if e[0] == "send"} <= {3}

"""A session's VOD requests: MANIFEST, INIT and SEGMENT, answered from the media directory.

A segment is sent one CMAF chunk (moof + mdat) at a time, each written to the request stream
as soon as it is read: the player appends the first chunk and starts playing while the rest
of the segment is on its way, and the server never holds a whole segment (24 MB at 95
Mbit/s). Disk reads run in a worker thread (`off_the_loop`), so reading never stalls
another connection's pacing. The test hook that withholds data (`WithholdingLookup`) wraps
the lookup, so the serving path has no test-only branch.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from pccstream.protocol import Kind, Request

log = logging.getLogger("pccstream.session")

# Stream priorities, served highest first (streams without one, such as INIT, come before
# all): segments are -index, the manifest goes before every segment, and the first chunk of
# the session's first segment before the manifest. A player that starts before the manifest
# asks for segment 0 at once; it plays from that chunk, and it can ask for segment 1 only
# once the manifest is in. Sent after the whole of segment 0, the manifest left the link idle
# for a round trip at the end of segment 0, while the buffer held about one chunk.
MANIFEST_PRIORITY = 1
FIRST_CHUNK_PRIORITY = 2


@dataclass
class Body:
    """A response body: its length (the response header comes first) and its bytes: `head`,
    pieces already in memory, then `pieces`, read on demand (blocking reads: iterate them off
    the event loop)."""

    length: int
    pieces: Iterator[bytes]
    head: tuple[bytes, ...] = ()

    @classmethod
    def of(cls, data: bytes) -> Body:
        return cls(len(data), iter(()), (data,) if data else ())

    def read_all(self) -> bytes:
        """Every piece joined, checked against `length` (tests, small bodies)."""
        data = b"".join((*self.head, *self.pieces))
        if len(data) != self.length:
            raise ValueError(f"body has {len(data)} bytes, expected {self.length}")
        return data


# The body for a request, or raise `ProtocolError`.
AsyncMediaLookup = Callable[[Request], Awaitable[Body]]


class MediaLookup(Protocol):
    """What a session needs from the media directory."""

    def body(self, request: Request) -> Body:
        """The body for a request (its pieces not yet read), or raise `ProtocolError`."""
        ...


class PriorityWriter(Protocol):
    def set_stream_priority(self, stream_id: int, priority: int | None) -> None: ...

    def boost_written(self, stream_id: int, priority: int) -> None: ...


def off_the_loop(media: MediaLookup) -> AsyncMediaLookup:
    """The lookup in a worker thread, which also reads the body's first piece: the first chunk
    of a segment is ready one thread hop after the request (it is on the startup's path)."""

    def body_with_first_piece(request: Request) -> Body:
        body = media.body(request)
        if body.head:
            return body
        first = next(body.pieces, None)
        return Body(body.length, body.pieces, () if first is None else (first,))

    async def lookup(request: Request) -> Body:
        return await asyncio.to_thread(body_with_first_piece, request)

    return lookup


async def read_pieces(body: Body) -> AsyncGenerator[bytes, None]:
    """The body's pieces: its `head` at once, the others each read in a worker thread; the
    reader is closed when the iteration stops early (a closed session)."""
    try:
        for piece in body.head:
            yield piece
        while (piece := await asyncio.to_thread(next, body.pieces, None)) is not None:
            yield piece
    finally:
        close = getattr(body.pieces, "close", None)
        if close is not None:
            close()


@dataclass(frozen=True)
class WithholdHook:
    """Test-only: hold back responses for segment >= `at_segment` for `seconds`, once."""

    at_segment: int
    seconds: float


class WithholdingLookup:
    """Test-only (`--enable-test-hooks`): the first SEGMENT request at or past
    `hook.at_segment` starts a window of `hook.seconds` during which every body waits."""

    def __init__(self, lookup: AsyncMediaLookup, hook: WithholdHook, *, session_id: int) -> None:
        self.lookup = lookup
        self.hook = hook
        self.session_id = session_id
        self._until: float | None = None
        self._done = False

    async def __call__(self, request: Request) -> Body:
        delay = self._delay(request)
        if delay > 0:
            await asyncio.sleep(delay)
        return await self.lookup(request)

    def _delay(self, request: Request) -> float:
        now = asyncio.get_running_loop().time()
        if not self._done and request.kind == Kind.SEGMENT and (
            request.segment >= self.hook.at_segment
        ):
            self._done = True
            self._until = now + self.hook.seconds
            log.info("session %d: withholding data for %.1f s (test hook)",
                     self.session_id, self.hook.seconds)
        if self._until is not None and now < self._until:
            return self._until - now
        return 0.0


class VodHandler:
    """Bodies from the media lookup; segments are prioritized oldest first, the manifest
    ahead of them, and the first chunk of the session's first segment ahead of the manifest."""

    def __init__(self, lookup: AsyncMediaLookup, writer: PriorityWriter) -> None:
        self.lookup = lookup
        self.writer = writer
        self._first_segment_started = False

    async def body(self, request: Request) -> Body:
        return await self.lookup(request)

    def prioritize(self, stream_id: int, request: Request) -> None:
        if request.kind == Kind.SEGMENT:
            # A player that requests the next segment while the current one downloads
            # (prefetch) needs the current one first: older segments are sent first.
            self.writer.set_stream_priority(stream_id, -request.segment)
        elif request.kind == Kind.MANIFEST:
            self.writer.set_stream_priority(stream_id, MANIFEST_PRIORITY)

    def first_piece_written(self, stream_id: int, request: Request) -> None:
        """The response's header and first piece are written (not yet flushed): for the
        session's first segment, they go before the manifest."""
        if request.kind == Kind.SEGMENT and not self._first_segment_started:
            self._first_segment_started = True
            self.writer.boost_written(stream_id, FIRST_CHUNK_PRIORITY)

"""A session's VOD requests: MANIFEST, INIT and SEGMENT, answered from the media directory.

Disk reads run in a worker thread (`read_off_the_loop`): a segment of the 95 Mbit/s rendition
is 24 MB, and reading it on the event loop would stall every connection's pacing. The test
hook that withholds data (`WithholdingLookup`) wraps the lookup, so the serving path has no
test-only branch.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from pccstream.protocol import Kind, Request

log = logging.getLogger("pccstream.session")

# The body for a request, or raise `ProtocolError`.
AsyncMediaLookup = Callable[[Request], Awaitable[bytes]]


class MediaLookup(Protocol):
    """What a session needs from the media directory."""

    def read(self, request: Request) -> bytes:
        """The body for a request, or raise `ProtocolError`."""
        ...


class PriorityWriter(Protocol):
    def set_stream_priority(self, stream_id: int, priority: int | None) -> None: ...


def read_off_the_loop(media: MediaLookup) -> AsyncMediaLookup:
    async def read(request: Request) -> bytes:
        return await asyncio.to_thread(media.read, request)

    return read


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

    async def __call__(self, request: Request) -> bytes:
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
    """Bodies from the media lookup; segments are prioritized oldest first."""

    def __init__(self, lookup: AsyncMediaLookup, writer: PriorityWriter) -> None:
        self.lookup = lookup
        self.writer = writer

    async def body(self, request: Request) -> bytes:
        return await self.lookup(request)

    def prioritize(self, stream_id: int, request: Request) -> None:
        if request.kind == Kind.SEGMENT:
            # A player that requests the next segment while the current one downloads
            # (prefetch) needs the current one first: older segments are sent first.
            self.writer.set_stream_priority(stream_id, -request.segment)

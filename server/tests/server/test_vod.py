"""The VOD handler's media lookup: reads off the event loop, and the withhold test hook as a
wrapper around the lookup."""

from __future__ import annotations

import asyncio
import threading

from pccstream.protocol import Kind, Request
from pccstream.server.vod import WithholdHook, WithholdingLookup, read_off_the_loop


class _ThreadRecordingMedia:
    def __init__(self) -> None:
        self.threads: list[int] = []

    def read(self, request: Request) -> bytes:
        self.threads.append(threading.get_ident())
        return b"x" * request.segment


def test_disk_reads_run_off_the_event_loop_thread() -> None:
    media = _ThreadRecordingMedia()

    async def scenario() -> bytes:
        return await read_off_the_loop(media)(Request(Kind.SEGMENT, 0, 3))

    assert asyncio.run(scenario()) == b"xxx"
    assert media.threads and media.threads[0] != threading.get_ident()


def test_withholding_starts_at_the_segment_and_holds_every_body_once() -> None:
    async def lookup(request: Request) -> bytes:
        return bytes([request.segment])

    async def scenario() -> list[tuple[int, float]]:
        loop = asyncio.get_running_loop()
        withheld = WithholdingLookup(lookup, WithholdHook(at_segment=2, seconds=0.2),
                                     session_id=1)
        start = loop.time()
        timings = []
        for kind, segment in [(Kind.SEGMENT, 1), (Kind.SEGMENT, 2), (Kind.MANIFEST, 0),
                              (Kind.SEGMENT, 5)]:
            body = await withheld(Request(kind, 0, segment))
            timings.append((body[0], loop.time() - start))
        return timings

    timings = asyncio.run(scenario())
    assert [segment for segment, _ in timings] == [1, 2, 0, 5]
    assert timings[0][1] < 0.1  # before the hook's segment: at once
    assert 0.19 <= timings[1][1] < 0.4  # the hook's segment waits the whole window
    assert timings[3][1] - timings[1][1] < 0.1  # once: later bodies are not held again

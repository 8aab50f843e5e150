"""Session churn leaves nothing behind: closed sessions let go of their QUIC connections.

The server keeps recently closed sessions for /api/sessions; before #17 defect 7 each kept its
whole connection alive through its writer and telemetry source, so RSS grew with churn.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest
from aioquic.quic.connection import QuicConnection

from pccstream.protocol import Kind, Request, Status
from pccstream.server import memory
from pccstream.wt_client import WebTransportClient

from .conftest import SEGMENTS, running_server


def _server_connections() -> int:
    gc.collect()
    return sum(
        1 for o in gc.get_objects()
        if isinstance(o, QuicConnection) and not o.configuration.is_client
    )


def test_churned_sessions_release_their_connections(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            for i in range(12):
                async with WebTransportClient.open("127.0.0.1", server.quic_port) as client:
                    if i % 2 == 0:  # a whole segment, then a clean close
                        answer = await client.get(Request(Kind.SEGMENT, 2, i % SEGMENTS))
                        assert answer.header.status == Status.OK
                        assert len(answer.body) == 200000
                    else:  # closed while the segment is still on its way
                        pending = asyncio.ensure_future(
                            client.get(Request(Kind.SEGMENT, 2, i % SEGMENTS)))
                        await asyncio.sleep(0.005)
                        pending.cancel()
            for _ in range(200):
                if all(s.closed for s in server.sessions) and _server_connections() == 0:
                    break
                await asyncio.sleep(0.05)
            assert len(server.sessions) == 12
            assert all(s.closed for s in server.sessions)
            assert _server_connections() == 0
            assert {info["closed"] for info in server.sessions_info()} == {True}

    asyncio.run(scenario())


def _server_connections_uncollected() -> int:
    """Like `_server_connections`, without collecting first: what the server let go of alone."""
    return sum(
        1 for o in gc.get_objects()
        if isinstance(o, QuicConnection) and not o.configuration.is_client
    )


def test_ended_connections_are_freed_without_waiting_for_a_full_collection(
        fake_media: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """aioquic's connections refer to themselves, so only the cyclic collector frees an ended
    one and the segment bytes its streams still hold. Python collects its oldest generation
    only every few hundred sessions (a sawtooth in RSS), so the server collects after
    connections end. Automatic collection is off here: before that, none was ever freed."""
    monkeypatch.setattr(memory, "TRIM_DELAY_S", 0.05)

    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            for i in range(6):
                async with WebTransportClient.open("127.0.0.1", server.quic_port) as client:
                    pending = asyncio.ensure_future(
                        client.get(Request(Kind.SEGMENT, 2, i % SEGMENTS)))
                    if i % 2 == 0:
                        assert (await pending).header.status == Status.OK
                    else:  # closed with the segment still buffered for sending
                        while client.response_bytes_received == 0:
                            await asyncio.sleep(0.002)
                        pending.cancel()
            for _ in range(100):
                if all(s.closed for s in server.sessions):
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(4 * memory.TRIM_DELAY_S)
            assert all(s.closed for s in server.sessions)
            assert _server_connections_uncollected() == 0

    gc.collect()
    gc.disable()
    try:
        asyncio.run(scenario())
    finally:
        gc.enable()

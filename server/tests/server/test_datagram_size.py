"""The server's largest UDP payload: the operator's bound, and the peer's limit over it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest
from aioquic.buffer import Buffer  # pyright: ignore[reportPrivateImportUsage]
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.packet import QuicTransportParameters, push_quic_transport_parameters
from aioquic.tls import ExtensionType

from pccstream import aioquic_internals
from pccstream.errors import UserError
from pccstream.protocol import Kind, Request
from pccstream.server.app import ServerConfig, StreamingServer
from pccstream.server.datagram_size import (
    check_max_datagram_size,
    honour_peer_limit,
    peer_max_udp_payload_size,
)
from pccstream.wt_client import WebTransportClient

from .conftest import running_server


@pytest.mark.parametrize("size", [1200, 1452, 1472])
def test_sizes_an_ethernet_path_carries_are_accepted(size: int) -> None:
    assert check_max_datagram_size(size) == size


@pytest.mark.parametrize("size", [1199, 1473, 9000, 0])
def test_other_sizes_are_refused_naming_the_flag(size: int) -> None:
    with pytest.raises(UserError, match=rf"^--datagram-size {size}: expected 1200 to 1472"):
        check_max_datagram_size(size, "--datagram-size")


def _server_connection(size: int, peer_limit: int | None) -> QuicConnection:
    """A connection configured for `size` whose peer sent `peer_limit` (None: no parameter)."""
    connection = QuicConnection(
        configuration=QuicConfiguration(is_client=True, max_datagram_size=size)
    )
    buf = Buffer(capacity=256)
    push_quic_transport_parameters(buf, QuicTransportParameters(max_udp_payload_size=peer_limit))
    # What the TLS layer holds once it has read the peer's hello.
    connection.tls = SimpleNamespace(received_extensions=[  # type: ignore[assignment]
        (ExtensionType.ALPN, b"\x02h3"),
        (ExtensionType.QUIC_TRANSPORT_PARAMETERS, buf.data),
    ])
    return connection


@pytest.mark.parametrize(
    ("size", "peer_limit", "in_force"),
    [(1452, 1350, 1350), (1452, 65527, 1452), (1452, None, 1452), (1200, 1452, 1200)],
)
def test_the_peer_limit_lowers_the_size_and_never_raises_it(
    size: int, peer_limit: int | None, in_force: int
) -> None:
    connection = _server_connection(size, peer_limit)
    assert peer_max_udp_payload_size(connection) == peer_limit
    assert honour_peer_limit(connection) == in_force
    assert aioquic_internals.max_datagram_size(connection) == in_force


def test_no_transport_parameters_yet_leaves_the_size_alone() -> None:
    connection = QuicConnection(
        configuration=QuicConfiguration(is_client=True, max_datagram_size=1452)
    )
    assert peer_max_udp_payload_size(connection) is None
    assert honour_peer_limit(connection) == 1452


def test_the_server_sends_datagrams_of_its_size_and_says_so(
    fake_media: Path, tmp_path: Path
) -> None:
    async def largest(size: int) -> tuple[int, int]:
        async with (
            running_server(fake_media, tmp_path / f"state-{size}",
                           max_datagram_size=size) as server,
            WebTransportClient.open("127.0.0.1", server.quic_port) as client,
        ):
            await client.get(Request(Kind.SEGMENT, 2, 0))  # 200 kB: full-sized packets
            while not client.telemetry:
                await asyncio.sleep(0.01)
            return client.telemetry[0]["max_datagram_size"], client.largest_datagram_received

    async def scenario() -> None:
        assert await largest(1200) == (1200, 1200)
        assert await largest(1452) == (1452, 1452)

    asyncio.run(scenario())


def test_a_size_out_of_bounds_stops_the_server_before_it_binds(
    fake_media: Path, tmp_path: Path
) -> None:
    async def scenario() -> None:
        with pytest.raises(UserError, match="--max-datagram-size 1500"):
            await StreamingServer(
                ServerConfig(media_dir=fake_media, port=0, http_port=0, state_dir=tmp_path,
                             max_datagram_size=1500)
            ).start()

    asyncio.run(scenario())

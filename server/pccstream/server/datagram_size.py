"""The largest UDP payload the server sends (`pccstream serve --max-datagram-size`).

QUIC's default is 1200 bytes, which any path carries. An Ethernet path carries 1452 (IPv6)
or 1472 (IPv4) bytes of UDP payload, which is what the thesis's testbed gave its TCP flows
(MSS 1448). At 1200 bytes QUIC's headers, AEAD tag and frame headers take 3.2–3.8 % of the
media bytes, at 1452 2.7–3.0 % (`python -m pccstream.bench.wire_overhead`). aioquic does
no path-MTU discovery, so a larger size is a statement about the path, made by the operator
(or by an experiment's design), and it never exceeds what the peer accepts: its
`max_udp_payload_size` transport parameter, which aioquic parses but does not apply.
"""

from __future__ import annotations

# aioquic.buffer re-exports Buffer without __all__, which pyright reads as private.
from aioquic.buffer import Buffer  # pyright: ignore[reportPrivateImportUsage]
from aioquic.quic.connection import QuicConnection
from aioquic.quic.packet import pull_quic_transport_parameters
from aioquic.tls import ExtensionType

from pccstream import aioquic_internals
from pccstream.cc.base import DEFAULT_MAX_DATAGRAM_SIZE
from pccstream.errors import UserError

# The UDP payload of a 1500-byte IPv4 packet; the IPv6 one is 1452.
LARGEST_MAX_DATAGRAM_SIZE = 1472


def check_max_datagram_size(size: int, flag: str = "--max-datagram-size") -> int:
    """`size`, or a UserError naming `flag` when QUIC or an Ethernet path cannot carry it."""
    if not DEFAULT_MAX_DATAGRAM_SIZE <= size <= LARGEST_MAX_DATAGRAM_SIZE:
        raise UserError(
            f"{flag} {size}: expected {DEFAULT_MAX_DATAGRAM_SIZE} to {LARGEST_MAX_DATAGRAM_SIZE} "
            "bytes (QUIC's minimum to the UDP payload of a 1500-byte IPv4 packet)"
        )
    return size


def peer_max_udp_payload_size(connection: QuicConnection) -> int | None:
    """The peer's `max_udp_payload_size` transport parameter (None: not received or not sent)."""
    tls = getattr(connection, "tls", None)  # made with the first packet
    extensions = tls.received_extensions if tls is not None else None
    for ext_type, data in extensions or []:
        if ext_type == ExtensionType.QUIC_TRANSPORT_PARAMETERS:
            try:
                return pull_quic_transport_parameters(Buffer(data=data)).max_udp_payload_size
            except ValueError:  # aioquic closes such a connection itself
                return None
    return None


def honour_peer_limit(connection: QuicConnection) -> int:
    """Send no datagram larger than the peer accepts; returns the size in force.

    Call once the handshake has delivered the peer's transport parameters (ProtocolNegotiated),
    before the controller is installed: it sizes its windows in these datagrams."""
    limit = peer_max_udp_payload_size(connection)
    if limit is not None:
        aioquic_internals.limit_max_datagram_size(connection, limit)
    return aioquic_internals.max_datagram_size(connection)

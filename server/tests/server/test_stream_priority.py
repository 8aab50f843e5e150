"""Stream priorities on a real aioquic connection (no network: the queue order is read)."""

from __future__ import annotations

from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection

from pccstream.server import stream_priority


def _order(quic: QuicConnection) -> list[int]:
    return [s.stream_id for s in quic._streams_queue]


def test_written_bytes_are_boosted_until_sent_then_the_stream_falls_back() -> None:
    quic = QuicConnection(configuration=QuicConfiguration(is_client=True))
    segment, manifest = 2, 6
    quic.send_stream_data(segment, b"a" * 3000)  # header and first chunk
    stream_priority.set_priority(quic, segment, 0)
    stream_priority.boost_written(quic, segment, 2)
    quic.send_stream_data(segment, b"b" * 5000)  # the rest of the segment: not boosted
    quic.send_stream_data(manifest, b"m" * 500)
    stream_priority.set_priority(quic, manifest, 1)
    assert _order(quic) == [segment, manifest]
    sender = quic._streams[segment].sender
    sender.get_frame(2000)  # part of the boosted bytes sent
    assert _order(quic) == [segment, manifest]
    sender.get_frame(1000)  # the last boosted byte sent: the manifest's turn
    assert sender.next_offset == 3000
    assert _order(quic) == [manifest, segment]


def test_a_boost_on_an_unknown_stream_is_ignored() -> None:
    quic = QuicConnection(configuration=QuicConfiguration(is_client=True))
    stream_priority.boost_written(quic, 99, 5)
    quic.send_stream_data(2, b"x")
    quic.send_stream_data(6, b"y")
    stream_priority.set_priority(quic, 6, 1)
    assert _order(quic) == [2, 6]  # no priority before prioritized, as before

from __future__ import annotations

import pytest

from pccstream.emulator.link import Link
from pccstream.emulator.packet import Packet
from pccstream.emulator.queues import CoDelQueue, DropTailQueue, parse_queue
from pccstream.emulator.trace import constant_rate_trace, parse_trace
from pccstream.errors import UserError


def test_droptail_packets() -> None:
    q = DropTailQueue(max_packets=2)
    assert q.enqueue(Packet(0, 100), 0) and q.enqueue(Packet(0, 100), 0)
    assert not q.enqueue(Packet(0, 100), 0)
    assert len(q) == 2 and q.bytes == 200


def test_droptail_bytes() -> None:
    q = DropTailQueue(max_bytes=3000)
    assert q.enqueue(Packet(0, 1500), 0) and q.enqueue(Packet(0, 1500), 0)
    assert not q.enqueue(Packet(0, 1), 0)
    q.dequeue(0)
    assert q.enqueue(Packet(0, 1500), 0)


def test_packet_in_transmission_leaves_the_queue() -> None:
    # 2-packet queue, one 1504-byte opportunity every 10 ms, 3000-byte packets span two.
    link = Link("down", parse_trace("10\n", "t"), DropTailQueue(max_packets=2))
    for _ in range(3):
        link.enqueue(Packet(0, 3000), 0.0)
    assert link.dropped == 1  # third refused: queue holds 2
    link.rationalize(10.0)  # first packet dequeued into transmission
    link.enqueue(Packet(10.5, 3000), 10.5)
    assert link.dropped == 1  # accepted: the in-transit packet no longer counts
    link.enqueue(Packet(10.5, 3000), 10.5)
    assert link.dropped == 2


def test_tail_drops_under_overload_count() -> None:
    # 100 packets at once into a 10-packet queue on a slow link: exactly 90 tail drops.
    link = Link("down", constant_rate_trace(1e6), DropTailQueue(max_packets=10))
    for _ in range(100):
        link.enqueue(Packet(0.0, 1500), 0.0)
    assert link.dropped == 90
    delivered = link.pop_ready(10_000)
    assert len(delivered) == 10


@pytest.mark.parametrize(
    ("spec", "pkts", "nbytes"),
    [("30pkts", 30, None), ("45kB", None, 45000), ("1200B", None, 1200), ("infinite", None, None),
     ("1.5MB", None, 1_500_000)],
)
def test_parse_queue(spec: str, pkts: int | None, nbytes: int | None) -> None:
    q = parse_queue(spec)
    assert (q.max_packets, q.max_bytes) == (pkts, nbytes)


def test_parse_codel() -> None:
    q = parse_queue("codel:target=10,interval=200,pkts=500")
    assert isinstance(q, CoDelQueue)
    assert (q.target, q.interval, q.max_packets) == (10, 200, 500)


@pytest.mark.parametrize("spec", ["0pkts", "big", "codel:foo=1", "-5kB", "2.5pkts"])
def test_parse_queue_rejects(spec: str) -> None:
    with pytest.raises(UserError):
        parse_queue(spec, "--queue")


def _codel_run(rate_bps: float, offered_pps: float, seconds: float,
               codel: bool = True) -> tuple[Link, list[float]]:
    link = Link("down", constant_rate_trace(rate_bps), CoDelQueue() if codel else None)
    delays: list[float] = []
    t = 0.0
    step = 1000.0 / offered_pps
    end = seconds * 1000
    while t < end:
        link.enqueue(Packet(t, 1500), t)
        t += step
        for p in link.pop_ready(t):
            delays.append(t - p.arrival)
    return link, delays


def test_codel_keeps_standing_queue_short() -> None:
    # 10 % overload (unresponsive) for 20 s: an infinite drop-tail queue would build about 2 s
    # of delay by the end; CoDel's growing drop rate keeps the sojourn time far lower.
    link, delays = _codel_run(12e6, 1.1 * 1000, 20)
    assert link.dropped > 500
    late = delays[3 * len(delays) // 4 :]
    assert sorted(late)[len(late) // 2] < 100


def test_codel_does_not_drop_below_capacity() -> None:
    link, _ = _codel_run(12e6, 500, 5)  # 6 Mbit/s offered on 12 Mbit/s
    assert link.dropped == 0


def test_infinite_queue_grows_under_the_same_overload() -> None:
    link, delays = _codel_run(12e6, 1.1 * 1000, 20, codel=False)
    assert link.dropped == 0
    assert max(delays) > 1000

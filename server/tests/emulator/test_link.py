"""The link model on a virtual clock: times are explicit ms, no sleeping."""

from __future__ import annotations

import random

from pccstream.emulator.link import Link
from pccstream.emulator.loss import BernoulliLoss
from pccstream.emulator.packet import Packet
from pccstream.emulator.queues import DropTailQueue
from pccstream.emulator.trace import constant_rate_trace, parse_trace


def run(link: Link, arrivals: list[tuple[float, int]], until: float) -> list[tuple[float, int]]:
    """Feed (time, size) arrivals, step the clock 0.5 ms at a time; return (delivery, size)."""
    out: list[tuple[float, int]] = []
    pending = sorted(arrivals)
    t = 0.0
    i = 0
    while t <= until:
        while i < len(pending) and pending[i][0] <= t:
            at, size = pending[i]
            link.enqueue(Packet(at, size, dest=i), at)
            i += 1
        out += [(t, p.size) for p in link.pop_ready(t)]
        t += 0.5
    return out


def departures(link: Link, arrivals: list[tuple[float, int]], until: float) -> list[float]:
    """Exact departure times using next_event() (what the relay's timer does)."""
    pending = sorted(arrivals)
    got: list[float] = []
    i = 0
    t = 0.0
    while True:
        nxt = link.next_event()
        t_arr = pending[i][0] if i < len(pending) else float("inf")
        t = min(nxt, t_arr)
        if t > until:
            return got
        if t_arr <= nxt:
            link.enqueue(Packet(t_arr, pending[i][1]), t_arr)
            i += 1
        got += [t] * len(link.pop_ready(t))


def test_one_packet_per_opportunity() -> None:
    link = Link("down", parse_trace("1\n2\n3\n4\n", "t"))
    assert departures(link, [(0.0, 1500)] * 3, 10) == [1, 2, 3]


def test_opportunity_at_arrival_time_is_not_usable() -> None:
    # mahimahi rationalizes before enqueueing: a packet arriving at t=2 cannot use t=2.
    link = Link("down", parse_trace("2\n4\n", "t"))
    assert departures(link, [(2.0, 100)], 10) == [4]
    link = Link("down", parse_trace("2\n4\n", "t"))
    assert departures(link, [(1.9, 100)], 10) == [2]


def test_leftover_bytes_serve_the_next_packets() -> None:
    # One 1504-byte opportunity per ms; 500-byte packets: three fit in one opportunity.
    link = Link("down", parse_trace("1\n2\n3\n", "t"))
    assert departures(link, [(0.0, 500)] * 4, 10) == [1, 1, 1, 2]


def test_packet_bytes_carry_over_across_opportunities() -> None:
    # 1000-byte packets: #1 at t=1 (504 left over goes to #2), #2 finishes at t=2 using 496,
    # 1008 left serves #3 (done at t=2, 8 left -> #4 needs 992 more: done at t=3)...
    link = Link("down", parse_trace("1\n2\n3\n4\n5\n", "t"))
    deps = departures(link, [(0.0, 1000)] * 6, 20)
    # cumulative bytes served by t: 1504 t; packet k (1-based) leaves when 1000 k <= 1504 t
    assert deps == [1, 2, 2, 3, 4, 4]


def test_big_packet_spans_opportunities() -> None:
    link = Link("down", parse_trace("1\n2\n3\n4\n", "t"))
    assert departures(link, [(0.0, 4000)], 10) == [3]


def test_unused_opportunities_are_wasted() -> None:
    # Opportunities at 1..3 pass with an empty queue; a packet arriving at 3.5 waits for 4.
    link = Link("down", parse_trace("1\n2\n3\n4\n", "t"))
    assert departures(link, [(3.5, 1500), (3.5, 1500)], 10) == [4, 5]


def test_trace_loops_with_period_last_timestamp() -> None:
    # period 3: opportunities at 1, 3, 4, 6, 7, 9, 10 ...
    link = Link("down", parse_trace("1\n3\n", "t"))
    assert departures(link, [(0.0, 1500)] * 7, 30) == [1, 3, 4, 6, 7, 9, 10]


def test_leading_zero_coincides_with_previous_loop_end() -> None:
    # "0\n2": opportunities at 0, 2, 2(=2+0), 4, 4, 6 ...: mahimahi's looping
    link = Link("down", parse_trace("0\n2\n", "t"), start_ms=0)
    assert departures(link, [(-1.0, 1500)] * 5, 30) == [0, 2, 2, 4, 4]


def test_repeated_timestamps_deliver_several_packets_at_once() -> None:
    link = Link("down", parse_trace("5\n5\n5\n10\n", "t"))
    assert departures(link, [(0.0, 1500)] * 4, 20) == [5, 5, 5, 10]


def test_constant_rate_delivers_configured_rate() -> None:
    link = Link("down", constant_rate_trace(12e6), DropTailQueue())
    deps = departures(link, [(0.0, 1500)] * 3000, 10_000)
    span = deps[-1] - deps[0]
    bits = 1500 * 8 * (len(deps) - 1)
    assert abs(bits / (span / 1000) - 12e6) / 12e6 < 0.002


def test_delay_after_bottleneck() -> None:
    link = Link("down", parse_trace("1\n2\n", "t"), delay_ms=30)
    out = run(link, [(0.0, 1500), (0.0, 1500)], 100)
    assert [t for t, _ in out] == [31.0, 32.0]


def test_unshaped_link_is_pure_delay() -> None:
    link = Link("up", None, delay_ms=7.5)
    assert departures(link, [(1.0, 1500), (1.25, 100)], 100) == [8.5, 8.75]


def test_delay_decrease_does_not_reorder() -> None:
    link = Link("down", None, delay_ms=50)
    link.enqueue(Packet(0.0, 100, dest="a"), 0.0)
    link.set_delay(10, 1.0)
    link.enqueue(Packet(1.0, 100, dest="b"), 1.0)
    assert link.pop_ready(49.9) == []
    got = link.pop_ready(50.0)
    assert [p.dest for p in got] == ["a", "b"]


def test_rate_change_takes_effect_at_now() -> None:
    link = Link("down", parse_trace("10\n", "t"))  # one opportunity every 10 ms
    link.set_trace(parse_trace("1\n", "t2"), 25.0)  # now one per ms, loop starting at 25
    assert departures(link, [(25.0, 1500)] * 3, 100) == [26, 27, 28]


def test_random_loss_after_bottleneck_is_seeded() -> None:
    def delivered(seed: int) -> list[int]:
        link = Link("down", parse_trace("1\n", "t"), loss=BernoulliLoss(0.3, random.Random(seed)))
        out = run(link, [(0.0, 1500)] * 200, 300)
        assert link.dropped + len(out) == 200
        return [t for t, _ in out]

    assert delivered(1) == delivered(1)
    assert delivered(1) != delivered(2)


def test_status_reports_capacity_and_queue() -> None:
    link = Link("down", constant_rate_trace(12e6), delay_ms=5)
    for _ in range(10):
        link.enqueue(Packet(0.0, 1500), 0.0)
    st = link.status(2000.0)
    assert abs(st.capacity_mbps - 12.0) < 0.02  # type: ignore[operator]
    assert st.queue_packets == 0 and st.delay_ms == 5
    link2 = Link("down", constant_rate_trace(1e6))
    for _ in range(10):
        link2.enqueue(Packet(0.0, 1500), 0.0)
    st2 = link2.status(0.5)
    assert st2.queue_packets == 10 and st2.queue_bytes == 15000

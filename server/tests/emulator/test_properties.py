"""Invariants of the link model over random traces and arrivals (hypothesis, seeded)."""

from __future__ import annotations

import io

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from pccstream.emulator.link import Link
from pccstream.emulator.log import EventLog
from pccstream.emulator.packet import Packet
from pccstream.emulator.queues import DropTailQueue
from pccstream.emulator.trace import PACKET_SIZE, parse_trace

traces = st.lists(st.integers(0, 40), min_size=1, max_size=30).map(sorted).filter(
    lambda xs: xs[-1] > 0
)
arrivals = st.lists(
    st.tuples(st.floats(0, 200, allow_nan=False), st.integers(1, 4000)), max_size=60
)


@seed(1234)
@settings(max_examples=150, deadline=None)
@given(traces, arrivals, st.one_of(st.none(), st.integers(1, 10)))
def test_fifo_conservation_and_capacity(times: list[int], arr: list[tuple[float, int]],
                                        limit: int | None) -> None:
    trace = parse_trace("\n".join(map(str, times)) + "\n", "h")
    buf = io.StringIO()
    link = Link("down", trace, DropTailQueue(max_packets=limit), log=EventLog(buf, 0, {}))
    arr = sorted(arr)
    for i, (t, size) in enumerate(arr):
        link.enqueue(Packet(t, size, dest=i), t)
    end = 200 + (4000 * 60 / PACKET_SIZE + 1) * trace.period_ms
    out = link.pop_ready(end)
    ids = [p.dest for p in out]
    assert ids == sorted(ids)  # FIFO
    assert len(out) + link.dropped == len(arr)  # conservation
    if limit is None:
        assert link.dropped == 0
    served = 0
    for line in buf.getvalue().splitlines():
        f = line.split()
        if line.startswith("#") or f[2] != "-":
            continue
        t, size, qdelay = float(f[0]), int(f[3]), float(f[4])
        assert t == int(t) and qdelay > 0  # departs at an opportunity after arriving
        served += size
        # never more bytes out by t than opportunities at or before t
        assert served <= trace.count_upto(t) * PACKET_SIZE

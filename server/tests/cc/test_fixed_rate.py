"""`fixed-rate`, the reference arm: one rate whatever the path does."""

from __future__ import annotations

import pytest

from pccstream.cc import create_controller
from pccstream.cc.fixed_rate import FixedRate, FixedRateParams
from pccstream.cc.sim import Link, Simulator, report


def _run(rate_mbps: float, seconds: float = 20.0) -> tuple[float, float, float]:
    sim = Simulator(Link(12.0, 0.03, 45_000), seed=1)
    sim.add_flow(create_controller("fixed-rate", {"rate_mbps": str(rate_mbps)}, seed=1))
    sim.run(seconds)
    r = report(sim, 2.0, seconds)
    return r.utilization, r.p95_queue_delay_ms, r.loss_rate


def test_it_paces_at_its_rate_with_a_window_of_two_bdps() -> None:
    ctrl = FixedRate(FixedRateParams(rate_mbps=12.0, window_rtts=2.0))
    ctrl.bind(max_datagram_size=1200, now=0.0)
    ctrl.rtt_stats.update(0.05)
    assert ctrl.is_rate_based and ctrl.pacing_rate == 1_500_000.0
    assert ctrl.congestion_window == int(2 * 1_500_000.0 * ctrl.rtt_stats.srtt_or_initial())


def test_below_capacity_it_delivers_its_rate_and_builds_no_queue() -> None:
    util, p95_queue_ms, loss = _run(10.8)
    assert util == pytest.approx(0.9, abs=0.01)
    assert p95_queue_ms < 1.0 and loss == 0.0


def test_above_capacity_the_window_bounds_what_it_sends() -> None:
    # At 1.5 x capacity the window (2 BDPs at the rate) fills the 1-BDP queue: the link is
    # saturated and loses the excess, but nothing grows without bound.
    util, p95_queue_ms, loss = _run(18.0)
    assert util > 0.98 and 0.0 < loss < 0.4
    assert p95_queue_ms <= 31.0  # the queue's 45 kB at 12 Mbit/s

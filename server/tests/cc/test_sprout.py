"""Sprout and Sprout-EWMA: the rate filter against hand-computed posteriors, the forecast
against Poisson quantiles, the forecast's coverage on a synthetic Poisson link in the link
model, the ACK-derived arrival ticks, the registry and the contest figure."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from pccstream.bench.cellular_arms import TRACES_DIR
from pccstream.cc.registry import create_controller
from pccstream.cc.sim import Link, Receiver, Simulator, TraceSchedule, scenario_cellular
from pccstream.cc.sprout import (
    RateFilter,
    Sprout,
    SproutForecaster,
    SproutParams,
    transition_matrix,
)
from pccstream.cc.sprout_ewma import SproutEwma
from pccstream.cc.tick_arrivals import TickArrivals
from pccstream.emulator.trace import load_trace
from pccstream.errors import UserError


def _phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def test_transition_matrix_by_hand() -> None:
    # Grid 0, 50, 100 packets/s; per-tick drift sigma 25; escape from an outage 0.1.
    t = transition_matrix(100.0, 3, 25.0, 0.1)
    # From 50: the bins hold (-inf, 25), [25, 75), [75, inf).
    assert t[1] == pytest.approx([_phi(-1), _phi(1) - _phi(-1), 1 - _phi(1)])
    # From the outage: stay with 0.9, else drift as from rate 0 (bin 0 left out).
    to_50, to_100 = _phi(3) - _phi(1), 1 - _phi(3)
    assert t[0] == pytest.approx([0.9, 0.1 * to_50 / (to_50 + to_100),
                                  0.1 * to_100 / (to_50 + to_100)])
    assert t.sum(axis=1) == pytest.approx([1, 1, 1])


def test_filter_posteriors_by_hand() -> None:
    f = RateFilter(max_rate=100.0, bins=3, rate_sigma=0.0, outage_escape_rate=0.0,
                   tick_s=0.02)  # no drift: evolving changes nothing
    # One arrival in 20 ms: Poisson means 0, 1, 2 per tick.
    f.evolve()
    f.observe(1)
    w = [0.0, math.exp(-1), 2 * math.exp(-2)]
    assert f.posterior == pytest.approx([x / sum(w) for x in w])
    # Then three arrivals in a tick the sender may have limited: at least 3.
    prior = f.posterior.copy()
    at_least = [0.0, 1 - math.exp(-1) * (1 + 1 + 1 / 2),
                1 - math.exp(-2) * (1 + 2 + 2)]
    f.observe(3, exact=False)
    w = [p * q for p, q in zip(prior, at_least, strict=True)]
    assert f.posterior == pytest.approx([x / sum(w) for x in w])


def test_filter_evolve_then_observe_by_hand() -> None:
    f = RateFilter(max_rate=100.0, bins=3, rate_sigma=25.0 / math.sqrt(0.02),
                   outage_escape_rate=-math.log(0.9) / 0.02, tick_s=0.02)
    f.posterior = np.array([0.0, 1.0, 0.0])
    f.evolve()
    moved = [_phi(-1), _phi(1) - _phi(-1), 1 - _phi(1)]
    assert f.posterior == pytest.approx(moved)
    f.observe(0)  # nothing arrived in a busy tick: likely an outage
    w = [moved[0] * 1.0, moved[1] * math.exp(-1), moved[2] * math.exp(-2)]
    assert f.posterior == pytest.approx([x / sum(w) for x in w])


def test_forecast_of_a_known_rate_is_the_poisson_quantile() -> None:
    # Rate certain and constant (no drift): k ticks deliver Poisson(k x rate x tick).
    params = SproutParams(max_rate=500.0, bins=2, rate_sigma=0.0, outage_escape_rate=0.0,
                          ticks=4)
    forecaster = SproutForecaster(params)
    forecaster.filter.posterior = np.array([0.0, 1.0])
    for k, cautious in enumerate(forecaster.forecast(), start=1):
        mean = k * 500.0 * 0.02
        cdf, n = 0.0, 0
        while True:
            cdf += math.exp(-mean) * mean**n / math.factorial(n)
            if cdf >= 0.05:
                break
            n += 1
        assert cautious == n


def _poisson_trace(rng: random.Random, seconds: float) -> TraceSchedule:
    """Opportunities as a Poisson process whose rate (per s) steps every 2 s."""
    times: dict[int, int] = {}
    t, rate, next_change = 0.0, 400.0, 2.0
    while t < seconds:
        t += rng.expovariate(rate)
        if t >= next_change:
            rate = rng.choice([150.0, 300.0, 450.0, 600.0])
            next_change += 2.0
        ms = max(1, int(t * 1000))
        times[ms] = times.get(ms, 0) + 1
    ordered = sorted(times)
    return TraceSchedule(tuple(ordered), tuple(times[m] for m in ordered))


def test_forecast_coverage_on_a_poisson_link() -> None:
    """The 5th-percentile forecast of deliveries over 5 ticks is at most what the link
    could deliver for >= 90 % of ticks, while the flow still uses most of the link."""
    rng = random.Random(11)
    trace = _poisson_trace(rng, 40.0)
    base_rtt = 0.040
    sim = Simulator(Link(0.0, base_rtt, 10**12, trace=trace), seed=3,
                    receiver=Receiver(ack_every=2))
    ctrl = Sprout()
    events: list[dict[str, Any]] = []
    ctrl.event_sink = events.append
    # One datagram per opportunity (1504 bytes), so forecasts and capacity share a unit.
    flow = sim.add_flow(ctrl, mss=1504)
    sim.run(40.0)
    opportunities = np.repeat(np.array(trace.times_ms, dtype=float) / 1000,
                              np.array(trace.counts))
    horizon = 5
    held = total = 0
    for e in events:
        if e["type"] != "sprout" or e["t_ms"] < 3000:
            continue
        # The ACK clock runs one base RTT behind the bottleneck's (no ACK delay left).
        start = e["tick_end_ms"] / 1000 - base_rtt
        capacity = np.count_nonzero((opportunities >= start)
                                    & (opportunities < start + horizon * 0.02))
        total += 1
        held += e["forecast_packets"][horizon - 1] <= capacity
    assert total > 1000
    assert held / total >= 0.90
    used = flow.stats.delivered_total * 8 / 40.0 / 1e6
    assert used >= 0.6 * trace.average_mbps()


def test_ack_clock_takes_the_ack_delay_off() -> None:
    ticks = TickArrivals(tick_s=0.02, lag_s=0.025)
    # A frame at 65 ms acknowledging two packets, reporting 10 ms of ACK delay: they
    # arrived at 55 ms, in tick [40, 60).
    ticks.add_acked(0.065, 0.010, 1200, entry_offset=0.040)
    ticks.add_acked(0.065, 0.011, 1200, entry_offset=0.040)
    ticks.flush(0.040, ack_delay=0.010)
    closed = ticks.close(0.090, queued_since=None, entry_offset=0.040)
    assert [(round(t.end, 3), t.bytes) for t in closed] == [(0.06, 2400)]
    # The packets queued from 50 ms (sent + min RTT) to 55 ms: the tick was not busy.
    assert not closed[0].busy


def test_zero_arrivals_with_a_packet_queued_are_an_observation() -> None:
    ticks = TickArrivals(tick_s=0.02, lag_s=0.0)
    ticks.add(0.001, 0.0, 1200, entry_offset=0.0)
    closed = ticks.close(0.061, queued_since=0.0, entry_offset=0.0)
    assert [(t.bytes, t.busy) for t in closed] == [(1200, True), (0, True), (0, True)]


@pytest.mark.parametrize("name", ["sprout", "sprout-ewma"])
def test_registry_and_bad_parameters(name: str) -> None:
    ctrl = create_controller(name, {"target_ms": "60"})
    assert isinstance(ctrl, Sprout | SproutEwma)
    assert ctrl.params.target_ms == 60.0
    with pytest.raises(UserError, match=r"target_ms='5' is out of range"):
        create_controller(name, {"target_ms": "5"})
    with pytest.raises(UserError, match=rf"controller '{name}' has no parameter 'rate'"):
        create_controller(name, {"rate": "1"})


def test_sprout_against_cubic_on_the_contest_trace() -> None:
    """The issue's figure on the link model (Verizon-LTE-short + 20 ms each way, one pass):
    p95 signal delay <= 0.1 x Cubic's at >= 0.6 x its throughput."""
    raw = load_trace(TRACES_DIR / "Verizon-LTE-short.down")
    trace = TraceSchedule(raw.times, raw.counts)
    cubic = scenario_cellular("cubic", trace)
    sprout = scenario_cellular("sprout", trace)
    assert sprout.p95_signal_delay_ms <= 0.1 * cubic.p95_signal_delay_ms
    assert sprout.throughput_mbps >= 0.6 * cubic.throughput_mbps

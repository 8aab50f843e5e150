"""aioquic's Cubic and Reno as comparison arms: they behave as expected behind our pacer
(simulation figures, not measurements)."""

from __future__ import annotations

import pytest

from pccstream.cc import create_controller
from pccstream.cc.sim import Link, SimPacket, Simulator, report
from pccstream.cc.window import WindowController

MSS = 1200


def grown(name: str, acks: int = 40) -> tuple[WindowController, float]:
    w = WindowController(name)
    w.bind(max_datagram_size=MSS, now=0.0)
    t = 0.0
    for pn in range(acks):
        p = SimPacket(pn, t, MSS, 0)
        w.on_packet_sent(t, p)
        w.rtt_stats.update(0.03)
        w.on_rtt_sample(t + 0.03, 0.03)
        w.on_packet_acked(t + 0.03, p)
        t += 0.001
    return w, t + 0.03


def test_reno_halves_on_loss() -> None:
    w, t = grown("reno")
    before = w.congestion_window
    p = SimPacket(1000, t, MSS, 0)
    w.on_packet_sent(t, p)
    w.on_packets_lost(t + 0.05, [p])
    assert w.congestion_window == before // 2
    assert w.ssthresh == before // 2


def test_cubic_reduces_by_its_beta_on_loss() -> None:
    # RFC 9438's beta_cubic = 0.7 (aioquic's constant): Cubic backs off less than half,
    # and aioquic applies it to the bytes in flight (a full window here).
    w, t = grown("cubic")
    before = w.congestion_window
    flight = [SimPacket(1000 + i, t, MSS, 0) for i in range(before // MSS)]
    for p in flight:
        w.on_packet_sent(t, p)
    w.on_packets_lost(t + 0.05, flight[:1])
    assert w.congestion_window == int((before - MSS) * 0.7)


@pytest.mark.parametrize("name", ["cubic", "reno"])
def test_window_arms_are_paced_through_the_hook(name: str) -> None:
    w, _ = grown(name, acks=5)
    srtt = w.rtt_stats.smoothed_rtt
    # Slow start: 2 x cwnd / srtt, the same rule every window-based arm gets.
    assert w.paced_rate(srtt) == pytest.approx(2.0 * w.congestion_window / srtt)


def sim(name: str, link: Link, seconds: float = 30.0) -> tuple[float, float, float]:
    s = Simulator(link, seed=1)
    s.add_flow(create_controller(name, seed=1))
    s.run(seconds)
    r = report(s, 5.0, seconds)
    return r.utilization, r.p95_rtt_inflation_ms, r.loss_rate


def test_sim_cubic_fills_a_deep_queue() -> None:
    # 10 BDP of buffer (300 ms at 12 Mbit/s): Cubic keeps most of it full.
    util, inflation, _ = sim("cubic", Link(12.0, 0.03, 450_000))
    assert util >= 0.95
    assert inflation >= 150.0


@pytest.mark.parametrize("name", ["cubic", "reno"])
def test_sim_window_arms_fill_a_one_bdp_queue(name: str) -> None:
    util, _, _ = sim(name, Link(12.0, 0.03, 45_000))
    assert util >= 0.9


@pytest.mark.parametrize("name", ["cubic", "reno"])
def test_sim_window_arms_collapse_under_two_percent_random_loss(name: str) -> None:
    util, _, _ = sim(name, Link(12.0, 0.03, 45_000, loss=0.02))
    bbr_util, _, _ = sim("bbr", Link(12.0, 0.03, 45_000, loss=0.02))
    assert util < 0.5 < 0.9 < bbr_util

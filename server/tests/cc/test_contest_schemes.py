"""The contest's schemes: each update rule on synthetic ACK/loss streams, then each on the
link model (simulation figures, not measurements)."""

from __future__ import annotations

import pytest

from pccstream.cc import create_controller
from pccstream.cc.aimd import Aimd, AimdParams
from pccstream.cc.delay_threshold import DelayThreshold, DelayThresholdParams
from pccstream.cc.ewma_bdp import EwmaBdp, EwmaBdpParams
from pccstream.cc.fixed_window import FixedWindow, FixedWindowParams
from pccstream.cc.packet_window import PacketWindowController
from pccstream.cc.registry import list_controllers
from pccstream.cc.rocinante import Rocinante, RocinanteParams
from pccstream.cc.sim import Link, SimPacket, Simulator, report
from pccstream.errors import UserError

MSS = 1200
CONTEST = ("fixed", "aimd", "delay-threshold", "rocinante", "ewma-bdp")


class Acks:
    """Sends packets one at a time and acks them with a chosen RTT."""

    def __init__(self, ctrl: PacketWindowController) -> None:
        self.ctrl = ctrl
        self.now = 0.0
        self.pn = 0
        ctrl.bind(max_datagram_size=MSS, now=0.0)

    def send(self) -> SimPacket:
        p = SimPacket(self.pn, self.now, MSS, 0)
        self.pn += 1
        self.ctrl.on_packet_sent(self.now, p)
        return p

    def ack(self, rtt: float, n: int = 1) -> None:
        for _ in range(n):
            p = self.send()
            t = p.sent_time + rtt  # type: ignore[operator]
            self.ctrl.rtt_stats.update(rtt)
            self.ctrl.on_packet_acked(t, p)
            self.ctrl.on_rtt_sample(t, rtt)
            self.now += 0.001


# -- registry ----------------------------------------------------------------------------


def test_every_contest_scheme_is_registered_with_documented_params() -> None:
    infos = {info.name: info for info in list_controllers()}
    for name in (*CONTEST, "bbr"):
        assert name in infos
        assert all(p.doc for p in infos[name].params)
    assert create_controller("fixed", {"window": "20"}).congestion_window == 20 * MSS
    with pytest.raises(UserError, match="valid parameters"):
        create_controller("aimd", {"gamma": "1"})
    with pytest.raises(UserError, match="out of range"):
        create_controller("rocinante", {"allowance": "0.5"})


# -- fixed --------------------------------------------------------------------------------


def test_fixed_window_never_moves() -> None:
    f = FixedWindow()
    a = Acks(f)
    assert f.congestion_window == 15 * MSS
    a.ack(0.03, 50)
    a.ack(2.0, 5)
    f.on_packets_lost(a.now, [a.send()])
    assert f.congestion_window == 15 * MSS
    assert FixedWindow(FixedWindowParams(window=3)).congestion_window == 3 * MSS


# -- aimd ---------------------------------------------------------------------------------


def test_aimd_adds_alpha_packets_per_rtt() -> None:
    c = Aimd(AimdParams(initial_window=10))
    a = Acks(c)
    # One window of ACKs adds about one packet (the sum of 1/w as w grows: a bit less).
    a.ack(0.05, 10)
    assert c.window == pytest.approx(11.0, abs=0.1)
    a.ack(0.05, 11)
    assert c.window == pytest.approx(12.0, abs=0.1)
    c2 = Aimd(AimdParams(initial_window=10, alpha=2))
    Acks(c2).ack(0.05, 10)
    assert c2.window == pytest.approx(12.0, abs=0.2)


def test_aimd_halves_on_loss_once_per_round_trip() -> None:
    c = Aimd(AimdParams(initial_window=20))
    a = Acks(c)
    old = [a.send() for _ in range(3)]
    c.on_packets_lost(a.now, [old[0]])
    assert c.window == pytest.approx(10.0)
    # More losses of packets sent before the decrease: the same congestion event.
    c.on_packets_lost(a.now, old[1:])
    assert c.window == pytest.approx(10.0) and c.decreases == 1
    a.now += 0.01
    c.on_packets_lost(a.now, [a.send()])  # a packet sent after the decrease
    assert c.window == pytest.approx(5.0) and c.decreases == 2


def test_aimd_timeout_triggers_decrease() -> None:
    # PTO (aioquic abandons the packet) and an ACK later than timeout_ms both count.
    c = Aimd(AimdParams(initial_window=16, timeout_ms=500))
    a = Acks(c)
    c.on_packets_expired([a.send()])
    assert c.window == pytest.approx(8.0)
    a.now += 0.01
    a.ack(0.6)  # 600 ms > 500 ms timeout
    assert c.window == pytest.approx(4.0)
    a.ack(0.4)  # in time: additive increase again
    assert c.window == pytest.approx(4.25)


def test_aimd_respects_min_window() -> None:
    c = Aimd(AimdParams(initial_window=2, min_window=1))
    a = Acks(c)
    for _ in range(5):
        a.now += 0.01
        c.on_packets_lost(a.now, [a.send()])
    assert c.window == 1.0 and c.congestion_window == MSS


# -- delay-threshold ------------------------------------------------------------------------


def test_delay_threshold_additive_increase_below_threshold() -> None:
    c = DelayThreshold(DelayThresholdParams(initial_window=10))
    a = Acks(c)
    a.ack(0.05, 10)  # 50 ms < 90 ms: +alpha (1) packet per RTT
    assert c.window == pytest.approx(11.0, abs=0.05)


def test_delay_threshold_additive_decrease_above_threshold() -> None:
    c = DelayThreshold(DelayThresholdParams(initial_window=50))
    a = Acks(c)
    a.ack(0.12, 50)  # 120 ms > 90 ms: -beta (10) packets per RTT
    assert c.window == pytest.approx(40.0, abs=1.5)
    c2 = DelayThreshold(DelayThresholdParams(initial_window=50, threshold_ms=150))
    Acks(c2).ack(0.12, 50)
    assert c2.window > 50


# -- rocinante ------------------------------------------------------------------------------


def test_rocinante_ewma_and_threshold() -> None:
    c = Rocinante(RocinanteParams(initial_window=10))
    a = Acks(c)
    a.ack(0.04, 10)  # min RTT 40 ms, EWMA 40 ms: below 1.4 x 40 = 56 ms: +2 per RTT
    assert c.min_rtt == pytest.approx(0.04) and c.rtt_ewma == pytest.approx(0.04)
    assert c.window == pytest.approx(12.0, abs=0.2)
    # One 200 ms sample moves the EWMA by only 1 % of the difference: no decrease.
    a.ack(0.2)
    assert c.rtt_ewma == pytest.approx(0.99 * 0.04 + 0.01 * 0.2)
    assert c.window > 12.0
    # A sustained rise to 100 ms crosses 56 ms after about 31 packets (0.99^n < 0.73).
    n = 0
    w = c.window
    while c.rtt_ewma is not None and c.rtt_ewma <= 0.056:
        w = c.window
        a.ack(0.1)
        n += 1
    assert 25 <= n <= 35 and c.window < w
    # Then -beta (5) packets per window of ACKs.
    c2 = Rocinante(RocinanteParams(initial_window=100))
    a2 = Acks(c2)
    a2.ack(0.04)
    c2.rtt_ewma = 0.1
    w = c2.window
    a2.ack(0.1, 100)
    assert c2.window == pytest.approx(w - 5, abs=0.3)


def test_rocinante_spike_reading_backs_off_only_on_spikes() -> None:
    c = Rocinante(RocinanteParams(initial_window=20, spike_reference=True))
    a = Acks(c)
    a.ack(0.04, 20)
    w = c.window
    a.ack(0.1, 3)  # 100 ms > 1.4 x EWMA (~40 ms): a spike, -5 per RTT
    assert c.window < w
    # A delay that stays at 100 ms becomes the baseline: growth resumes.
    a.ack(0.1, 300)
    assert c.rtt_ewma is not None and c.rtt_ewma > 0.1 / 1.4
    w = c.window
    a.ack(0.1, 20)
    assert c.window > w


def test_rocinante_window_floor() -> None:
    c = Rocinante(RocinanteParams(initial_window=3))
    a = Acks(c)
    a.ack(0.04)
    a.ack(1.0, 300)
    assert c.window == 2.0  # min_window


# -- ewma-bdp --------------------------------------------------------------------------------


def test_ewma_bdp_window_is_gain_rate_min_rtt() -> None:
    c = EwmaBdp(EwmaBdpParams(gain=1.0))
    c.bind(max_datagram_size=MSS, now=0.0)
    # ACK groups of 2 packets every 1.6 ms (1.5 MB/s), RTT 40 ms.
    t = 0.0
    for i in range(200):
        t += 0.0016
        for k in range(2):
            p = SimPacket(2 * i + k, t - 0.04, MSS, 0)
            c.on_packet_sent(t - 0.04, p)
            c.on_packet_acked(t, p)
    assert c.receive_rate == pytest.approx(1.5e6, rel=0.01)
    assert c.min_rtt == pytest.approx(0.04)
    assert c.window == pytest.approx(1.5e6 * 0.04 / MSS, rel=0.02)  # 50 packets


def test_ewma_bdp_bounds_and_gain() -> None:
    c = EwmaBdp(EwmaBdpParams(gain=1.25, max_window=30, min_window=5))
    c.bind(max_datagram_size=MSS, now=0.0)
    t = 0.0
    for i in range(100):
        t += 0.0008
        p = SimPacket(i, t - 0.04, MSS, 0)
        c.on_packet_sent(t - 0.04, p)
        c.on_packet_acked(t, p)
    assert c.window == 30  # 1.25 x 60 packets capped
    t += 5.0  # a 5 s outage: one huge interval drags the rate down, but not below min
    for i in range(100, 140):
        t += 0.5
        p = SimPacket(i, t - 0.04, MSS, 0)
        c.on_packet_sent(t - 0.04, p)
        c.on_packet_acked(t, p)
    assert c.window == 5


# -- on the link model ------------------------------------------------------------------------


def run(name: str, link: Link, seconds: float = 30.0) -> tuple[float, float, float]:
    sim = Simulator(link, seed=1)
    sim.add_flow(create_controller(name, seed=1))
    sim.run(seconds)
    r = report(sim, 5.0, seconds)
    return r.utilization, r.p95_rtt_inflation_ms, r.loss_rate


def test_sim_fixed_window_throughput_is_window_over_rtt() -> None:
    util, _, _ = run("fixed", Link(12.0, 0.03, 45_000))
    # 15 x 1200 B per ~30.8 ms = 4.7 Mbit/s of 12.
    assert util == pytest.approx(15 * MSS * 8 / 0.0308 / 12e6, rel=0.05)


def test_sim_aimd_fills_the_link_and_reacts_to_loss() -> None:
    util, _, loss = run("aimd", Link(12.0, 0.03, 45_000))
    assert util >= 0.9 and loss < 0.01


def test_sim_delay_schemes_keep_the_queue_short_on_a_deep_buffer() -> None:
    deep = Link(12.0, 0.03, 1_000_000)
    _, aimd_delay, _ = run("aimd", deep)
    for name in ("rocinante", "ewma-bdp"):
        util, delay, _ = run(name, deep)
        assert util >= 0.9 and delay < 0.2 * aimd_delay, name


def test_sim_delay_threshold_holds_rtt_near_its_threshold() -> None:
    sim = Simulator(Link(12.0, 0.03, 1_000_000), seed=1)
    sim.add_flow(create_controller("delay-threshold"))
    sim.run(30.0)
    rtts = sim.flows[0].stats.rtt_samples(10.0, 30.0)
    assert 0.08 <= sorted(rtts)[len(rtts) // 2] <= 0.1

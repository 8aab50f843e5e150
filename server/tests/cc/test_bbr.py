"""BBR v1: state machine, model and cwnd rules on synthetic ACK streams, and end-to-end
behaviour on the link model (simulation figures, not measurements)."""

from __future__ import annotations

import math
import random

import pytest

from pccstream.cc import create_controller
from pccstream.cc.bbr import HIGH_GAIN, PACING_GAIN_CYCLE, Bbr, BbrParams, BbrState
from pccstream.cc.delivery_rate import IdleDetector
from pccstream.cc.sim import Link, SimPacket, Simulator, report

MSS = 1200
RATE = 1.5e6  # 12 Mbit/s in bytes/s
RTT = 0.03


class Pipe:
    """A synthetic path: the controller's packets leave a bottleneck of `rate` bytes/s
    (FIFO, no drops) and are acked `rtt` later, one ACK per packet. The sender obeys the
    window and the pacing rate; `app(now)` says whether it has data."""

    def __init__(self, bbr: Bbr, *, rate: float = RATE, rtt: float = RTT) -> None:
        self.bbr = bbr
        self.rate = rate
        self.rtt = rtt
        self.now = 0.0
        self.pn = 0
        self.free_at = 0.0
        self.next_send = 0.0
        self.inflight: list[tuple[float, SimPacket]] = []  # (ack time, packet)
        bbr.bind(max_datagram_size=MSS, now=0.0)

    def run(self, until: float, app: object = None, step: float = 0.0002) -> None:
        bbr = self.bbr
        while self.now < until:
            self.now += step
            self.inflight.sort(key=lambda e: e[0])
            while self.inflight and self.inflight[0][0] <= self.now:
                t, p = self.inflight.pop(0)
                assert p.sent_time is not None
                bbr.rtt_stats.update(t - p.sent_time)
                bbr.on_packet_acked(t, p)
                bbr.on_rtt_sample(t, t - p.sent_time)
            has_data = app is None or app(self.now)  # type: ignore[operator]
            while (has_data and self.now >= self.next_send
                   and bbr.bytes_in_flight + MSS <= bbr.congestion_window):
                p = SimPacket(self.pn, self.now, MSS, 0)
                self.pn += 1
                bbr.on_packet_sent(self.now, p)
                depart = max(self.now, self.free_at) + MSS / self.rate
                self.free_at = depart
                self.inflight.append((depart + self.rtt, p))
                self.next_send = max(self.next_send, self.now - step) + MSS / bbr.pacing_rate


def bbr(seed: int = 1, **params: float) -> Bbr:
    return Bbr(BbrParams(**params), random.Random(seed))  # type: ignore[arg-type]


# -- constants and registry ------------------------------------------------------------------


def test_constants_match_the_draft_and_linux() -> None:
    p = BbrParams()
    assert p.high_gain == pytest.approx(2.885, abs=1e-3)
    assert p.cwnd_gain == 2.0 and p.startup_growth == 1.25 and p.startup_rounds == 3
    assert p.bw_window_rounds == 10 and p.min_rtt_window_s == 10.0
    assert p.probe_rtt_s == 0.2 and p.min_cwnd_packets == 4
    assert PACING_GAIN_CYCLE == (1.25, 0.75, 1, 1, 1, 1, 1, 1)


def test_registry_builds_bbr_with_params() -> None:
    ctrl = create_controller("bbr", {"cwnd_gain": "2.5", "probe_rtt_s": "0.3"}, seed=3)
    assert isinstance(ctrl, Bbr) and ctrl.is_rate_based
    assert ctrl.params.cwnd_gain == 2.5 and ctrl.params.probe_rtt_s == 0.3


def test_initial_state() -> None:
    b = bbr()
    b.bind(max_datagram_size=MSS, now=0.0)
    assert b.state is BbrState.STARTUP
    assert b.pacing_gain == pytest.approx(HIGH_GAIN) and b.cwnd_gain == pytest.approx(HIGH_GAIN)
    assert b.congestion_window == 10 * MSS
    # No RTT yet: the draft's nominal rate, initial window per 1 ms.
    assert b.pacing_rate == pytest.approx(HIGH_GAIN * 10 * MSS / 0.001)


# -- Startup, Drain, ProbeBW -----------------------------------------------------------------


def test_startup_drain_probe_bw_on_a_clean_path() -> None:
    b = bbr()
    pipe = Pipe(b)
    states = []
    t = 0.0
    while t < 3.0:
        t += 0.01
        pipe.run(t)
        if not states or states[-1] != b.state:
            states.append(b.state)
    assert states[:3] == [BbrState.STARTUP, BbrState.DRAIN, BbrState.PROBE_BW]
    assert b.filled_pipe
    assert b.btlbw == pytest.approx(RATE, rel=0.03)
    assert b.rtprop == pytest.approx(RTT + MSS / RATE, abs=0.002)
    # Steady state: cwnd = 2 x BDP + 3 send quanta (2 MSS each between 1.2 and 24 Mbit/s).
    bdp = b.btlbw * b.rtprop
    assert b.congestion_window == pytest.approx(2 * bdp + 6 * MSS, rel=0.02)
    assert b.pacing_rate == pytest.approx(b.pacing_gain * b.btlbw * 0.99, rel=1e-6)


def test_startup_exits_after_three_rounds_without_25_percent_growth() -> None:
    b = bbr()
    pipe = Pipe(b)
    exit_round = None
    plateau_round = None
    t = 0.0
    while b.state is BbrState.STARTUP and t < 3.0:
        t += 0.002
        pipe.run(t)
        if plateau_round is None and b.btlbw >= 0.8 * RATE:
            plateau_round = b.round_count
    exit_round = b.round_count
    assert plateau_round is not None
    # Growth stops within a round or two of reaching the bottleneck, then 3 more rounds.
    assert 3 <= exit_round - plateau_round <= 6


def test_drain_ends_when_inflight_is_one_bdp() -> None:
    b = bbr()
    pipe = Pipe(b)
    t = 0.0
    while b.state is not BbrState.DRAIN:
        t += 0.001
        pipe.run(t)
    assert b.pacing_gain == pytest.approx(1 / HIGH_GAIN)
    while b.state is BbrState.DRAIN:
        t += 0.001
        pipe.run(t)
    assert b.state is BbrState.PROBE_BW
    assert b.bytes_in_flight <= b.btlbw * b.rtprop + 6 * MSS + 2 * MSS


@pytest.mark.parametrize("seed", range(20))
def test_probe_bw_starts_at_a_random_phase_but_never_the_drain_phase(seed: int) -> None:
    b = bbr(seed)
    b.bind(max_datagram_size=MSS, now=0.0)
    b._enter_probe_bw(1.0)
    assert b.cycle_index != 1 and b.pacing_gain != 0.75
    assert b.pacing_gain == PACING_GAIN_CYCLE[b.cycle_index]


def test_probe_bw_start_phase_is_uniform_over_seven_phases() -> None:
    seen = set()
    for seed in range(200):
        b = bbr(seed)
        b._enter_probe_bw(0.0)
        seen.add(b.cycle_index)
    assert seen == {0, 2, 3, 4, 5, 6, 7}


def test_gain_cycle_advances_once_per_rtprop_on_a_stable_path() -> None:
    b = bbr()
    pipe = Pipe(b)
    pipe.run(3.0)
    assert b.state is BbrState.PROBE_BW
    gains = []
    t = 3.0
    while t < 3.0 + 16 * b.rtprop:
        t += 0.001
        pipe.run(t)
        if not gains or gains[-1][1] != b.cycle_index:
            gains.append((t, b.cycle_index))
    indices = [i for _, i in gains]
    for a, c in zip(indices, indices[1:], strict=False):
        assert c == (a + 1) % 8
    # About one phase per RTprop (the 1.25 phase may last a little longer).
    assert 10 <= len(gains) <= 18


def test_probe_bw_probe_phase_raises_inflight_and_drain_phase_lowers_it() -> None:
    b = bbr()
    pipe = Pipe(b)
    pipe.run(3.0)
    peak = {1.25: 0, 0.75: 10**9}
    t = 3.0
    while t < 5.0:
        t += 0.001
        pipe.run(t)
        if b.pacing_gain == 1.25:
            peak[1.25] = max(peak[1.25], b.bytes_in_flight)
        elif b.pacing_gain == 0.75:
            peak[0.75] = min(peak[0.75], b.bytes_in_flight)
    bdp = b.btlbw * b.rtprop
    quanta = 3 * 2 * MSS  # the draft's BBRInflight() adds 3 send quanta
    assert peak[1.25] >= 1.25 * bdp  # probing puts a quarter BDP more in flight...
    assert peak[0.75] <= bdp + quanta + MSS  # ...and the 0.75 phase drains it back


# -- ProbeRTT ---------------------------------------------------------------------------------


def test_probe_rtt_after_10_s_without_a_new_min_rtt() -> None:
    b = bbr()
    pipe = Pipe(b)
    pipe.run(3.0)
    assert b.state is BbrState.PROBE_BW
    # The path's RTT rises by 10 ms for good: RTprop is not refreshed, and after 10 s the
    # estimate expires.
    pipe.rtt = RTT + 0.010
    stamp = b.rtprop_stamp
    t = 3.0
    while b.state is not BbrState.PROBE_RTT:
        t += 0.005
        pipe.run(t)
        assert t < stamp + 11
    assert t == pytest.approx(stamp + 10.0, abs=0.2)
    prior = b.prior_cwnd
    assert prior > 4 * MSS
    entered = t
    while b.state is BbrState.PROBE_RTT:
        t += 0.001
        pipe.run(t)
        if b.state is BbrState.PROBE_RTT:
            assert b.congestion_window <= 4 * MSS
    # 200 ms at <= 4 packets in flight plus the round it takes to drain there.
    assert 0.2 <= t - entered <= 0.2 + 4 * b.rtprop + 0.05
    assert b.state is BbrState.PROBE_BW
    assert b.congestion_window >= prior * 0.98
    assert b.rtprop == pytest.approx(RTT + 0.010 + MSS / RATE, abs=0.002)


def test_probe_rtt_low_rate_samples_do_not_lower_the_bandwidth_estimate() -> None:
    b = bbr()
    pipe = Pipe(b)
    pipe.run(3.0)
    before = b.btlbw
    pipe.rtt = RTT + 0.010
    pipe.run(15.0)  # ProbeRTT happened at ~13 s
    assert b.btlbw == pytest.approx(before, rel=0.03)


def test_probe_rtt_exits_to_startup_if_pipe_was_never_filled() -> None:
    b = bbr()
    b.bind(max_datagram_size=MSS, now=0.0)
    b.state = BbrState.PROBE_RTT
    b.filled_pipe = False
    b.round_start = True
    b._probe_rtt_done_stamp = 1.0
    b._probe_rtt_round_done = True
    b._handle_probe_rtt(1.5)
    assert b.state is BbrState.STARTUP and b.pacing_gain == pytest.approx(HIGH_GAIN)


# -- app-limited ----------------------------------------------------------------------------


def bursty_app(period: float = 0.25, on: float = 0.02):
    """Data for `on` seconds every `period` (about 8 % of the 12 Mbit/s link)."""
    return lambda now: (now % period) < on


def test_app_limited_samples_do_not_lower_max_bandwidth() -> None:
    b = bbr()
    pipe = Pipe(b)
    pipe.run(2.0)
    assert b.btlbw == pytest.approx(RATE, rel=0.03)
    # Ten seconds of a video-like sender: short bursts, long silences. Far more than the
    # filter's 10 rounds, so unmarked low samples would have replaced the max long ago.
    pipe.run(12.0, app=bursty_app())
    assert b.round_count > 40
    assert b.btlbw >= 0.9 * RATE
    assert b.pacing_rate >= 0.9 * RATE * 0.75


def test_without_app_limited_marking_the_estimate_collapses() -> None:
    # The control for the test above: the same stream with the detector disabled.
    b = bbr()
    b.idle = IdleDetector(min_gap=math.inf)
    pipe = Pipe(b)
    pipe.run(2.0)
    pipe.run(12.0, app=bursty_app())
    assert b.btlbw < 0.5 * RATE


def test_app_limited_marks_resumed_sends_and_idle_restart() -> None:
    b = bbr()
    pipe = Pipe(b)
    pipe.run(3.0)
    assert b.state is BbrState.PROBE_BW
    pipe.run(3.5, app=lambda now: False)  # silence: everything acked, nothing sent
    assert b.bytes_in_flight == 0
    pipe.run(3.5005)
    assert b.sampler.is_app_limited and b.idle_restart
    # Restarting from idle in ProbeBW: pace at the estimate (gain 1), whatever the phase.
    assert b.pacing_rate == pytest.approx(b.btlbw * 0.99, rel=1e-6)


# -- loss and recovery ---------------------------------------------------------------------


def test_loss_enters_recovery_with_packet_conservation_and_exit_restores_cwnd() -> None:
    b = bbr()
    pipe = Pipe(b)
    pipe.run(3.0)
    cwnd = b.congestion_window
    # Declare the oldest two in-flight packets lost.
    pipe.inflight.sort(key=lambda e: e[0])
    lost = [pipe.inflight.pop(0)[1] for _ in range(2)]
    b.on_packets_lost(pipe.now, lost)
    assert b.in_recovery and b.packet_conservation
    assert b.congestion_window == max(b.bytes_in_flight, 4 * MSS)
    assert b.prior_cwnd == cwnd
    # A second loss in the same episode takes its bytes off the window.
    pipe.inflight.sort(key=lambda e: e[0])
    again = pipe.inflight.pop(0)[1]
    w = b.congestion_window
    b.on_packets_lost(pipe.now, [again])
    assert b.congestion_window == w - MSS
    # Conservation: the window never falls below what is in flight plus what was acked.
    pipe.run(pipe.now + 0.005)
    assert b.congestion_window >= b.bytes_in_flight
    # Once a packet sent after the loss is acked, recovery ends and the window is back.
    pipe.run(pipe.now + 2 * RTT)
    assert not b.in_recovery and not b.packet_conservation
    assert b.congestion_window >= cwnd * 0.98


def test_loss_does_not_change_the_model() -> None:
    b = bbr()
    pipe = Pipe(b)
    pipe.run(3.0)
    bw, rtprop, state = b.btlbw, b.rtprop, b.state
    pipe.inflight.sort(key=lambda e: e[0])
    b.on_packets_lost(pipe.now, [pipe.inflight.pop(0)[1]])
    assert (b.btlbw, b.rtprop, b.state) == (bw, rtprop, state)


def test_expired_packets_are_not_a_congestion_signal() -> None:
    b = bbr()
    pipe = Pipe(b)
    pipe.run(3.0)
    pipe.inflight.sort(key=lambda e: e[0])
    b.on_packets_expired([pipe.inflight.pop(0)[1]])
    assert not b.in_recovery
    assert b.sampler.bytes_in_flight == b.bytes_in_flight


def test_persistent_congestion_collapses_to_min_cwnd_and_recovers() -> None:
    b = bbr()
    pipe = Pipe(b)
    pipe.run(3.0)
    cwnd = b.congestion_window
    b.on_persistent_congestion()
    assert b.congestion_window == 4 * MSS and b.prior_cwnd == cwnd
    assert b.in_recovery
    # Packets sent before the collapse do not end the episode...
    pipe.run(pipe.now + 0.005)
    assert b.in_recovery and b.congestion_window < cwnd
    # ...the first one sent after it does, and the saved window comes back.
    pipe.run(pipe.now + 0.2)
    assert not b.in_recovery and b.congestion_window >= cwnd * 0.98


def test_pacing_version_changes_with_outputs() -> None:
    b = bbr()
    b.bind(max_datagram_size=MSS, now=0.0)
    v = b.pacing_version
    p = SimPacket(0, 0.0, MSS, 0)
    b.on_packet_sent(0.0, p)
    b.rtt_stats.update(RTT)
    b.on_packet_acked(RTT, p)
    b.on_rtt_sample(RTT, RTT)
    assert b.pacing_version > v
    assert b.pacing_rate == pytest.approx(HIGH_GAIN * 11 * MSS / RTT)


def test_packets_of_other_spaces_with_the_same_number_are_distinct() -> None:
    class QuicLike(SimPacket):
        __slots__ = ("epoch",)

    b = bbr()
    b.bind(max_datagram_size=MSS, now=0.0)
    a = QuicLike(0, 0.0, MSS, 0)
    a.epoch = "handshake"
    c = QuicLike(0, 0.0, MSS, 0)
    c.epoch = "1rtt"
    b.on_packet_sent(0.0, a)
    b.on_packet_sent(0.0, c)
    assert b.sampler.bytes_in_flight == 2 * MSS
    b.on_packet_acked(0.03, a)
    assert b.sampler.bytes_in_flight == MSS


# -- end to end on the link model (simulation figures) ------------------------------------


def bench_link(*, loss: float = 0.0, queue: int = 45_000) -> Link:
    return Link(rate_mbps=12.0, base_rtt=RTT, queue_bytes=queue, loss=loss)


def test_sim_full_utilization_on_one_bdp_queue() -> None:
    sim = Simulator(bench_link(), seed=1)
    sim.add_flow(create_controller("bbr", seed=1))
    sim.run(20.0)
    assert report(sim, 5.0, 20.0).utilization >= 0.95


def test_sim_ignores_two_percent_random_loss() -> None:
    sim = Simulator(bench_link(loss=0.02), seed=1)
    sim.add_flow(create_controller("bbr", seed=1))
    sim.run(20.0)
    r = report(sim, 5.0, 20.0)
    assert r.utilization >= 0.9 and r.loss_rate >= 0.015


def test_sim_keeps_a_deep_queue_short() -> None:
    sim = Simulator(bench_link(queue=450_000), seed=1)
    sim.add_flow(create_controller("bbr", seed=1))
    sim.run(20.0)
    r = report(sim, 5.0, 20.0)
    # cwnd 2 x BDP caps the queue at about one BDP (30 ms), unlike Cubic (see the
    # window-baseline tests), and usually far less.
    assert r.utilization >= 0.95 and r.p95_rtt_inflation_ms <= 35


def test_sim_two_bbr_flows_share() -> None:
    sim = Simulator(bench_link(queue=90_000), seed=2)
    sim.add_flow(create_controller("bbr", seed=1))
    sim.add_flow(create_controller("bbr", seed=2), start=1.0)
    sim.run(30.0)
    r = report(sim, 15.0, 30.0)
    assert r.utilization >= 0.9 and r.jain >= 0.8

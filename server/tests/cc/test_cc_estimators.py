"""RTT stats, monitor intervals and utility functions."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pccstream.cc.monitor_interval import MonitorInterval, MonitorIntervalQueue, path_steps
from pccstream.cc.rtt_stats import RttStats
from pccstream.cc.utility import (
    allegro_latency_utility,
    allegro_utility,
    filter_rtt_gradient,
    sigmoid,
    vivace_utility,
)


def test_rtt_stats_follow_rfc9002() -> None:
    stats = RttStats()
    assert not stats.has_sample and stats.srtt_or_initial() == 0.1
    stats.update(0.05)
    assert stats.smoothed_rtt == 0.05 and stats.rtt_variance == 0.025 and stats.min_rtt == 0.05
    stats.update(0.09, ack_delay=0.01)  # ack delay is removed above min_rtt
    assert stats.latest_rtt == pytest.approx(0.08)
    assert stats.smoothed_rtt == pytest.approx(0.875 * 0.05 + 0.125 * 0.08)
    stats.update(0.0001)
    assert stats.min_rtt == 0.001  # aioquic's 1 ms floor


@settings(max_examples=50, deadline=None)
@given(slope=st.floats(-0.5, 0.5), base=st.floats(0.005, 0.5),
       n=st.integers(2, 200), spacing=st.floats(1e-4, 0.01))
def test_mi_rtt_gradient_is_least_squares_slope(slope: float, base: float, n: int,
                                               spacing: float) -> None:
    mi = MonitorInterval(id=0, target_rate=1e6, tag=None, start_time=100.0, end_time=101.0)
    for i in range(n):
        sent = 100.0 + i * spacing
        mi.add_rtt_sample(sent, base + slope * (sent - 100.0))
    assert mi.rtt_gradient() == pytest.approx(slope, abs=1e-6)


def test_mi_gradient_degenerate_cases() -> None:
    mi = MonitorInterval(id=0, target_rate=1e6, tag=None, start_time=0.0, end_time=1.0)
    assert mi.rtt_gradient() == 0.0
    mi.add_rtt_sample(0.0, 0.03)
    mi.add_rtt_sample(0.0, 0.05)  # same send time: no slope measurable
    assert mi.rtt_gradient() == 0.0


def test_mi_gradient_minima_sees_a_queue_but_not_a_stall_on_the_ack_path() -> None:
    """A queue lifts every sample of the MI's second half; a stall delays only some."""
    def mi_with(rtt_of: Callable[[float], float]) -> MonitorInterval:
        mi = MonitorInterval(id=0, target_rate=1e6, tag=None, start_time=5.0, end_time=5.08)
        for i in range(40):
            x = i * 0.002
            mi.add_rtt_sample(5.0 + x, rtt_of(x))
        return mi

    queue = mi_with(lambda x: 0.080 + 0.05 * x)  # 5 % above capacity for the whole MI
    assert queue.rtt_gradient() == pytest.approx(0.05)
    assert queue.rtt_gradient_minima() == pytest.approx(0.05)
    # An 8 ms stall late in the MI: the ACKs it held arrive together, the oldest latest.
    stall = mi_with(lambda x: 0.080 + (0.008 - (x - 0.060) if 0.060 <= x < 0.068 else 0.0))
    assert stall.rtt_gradient() > 0.02
    assert stall.rtt_gradient_minima() == pytest.approx(0.0)
    assert stall.result(now=6.0, min_packets=0, app_limited_ratio=0.0).rtt_gradient_minima == (
        pytest.approx(0.0))


def test_path_steps_find_a_longer_path_but_not_a_queue_or_a_stall() -> None:
    flat = [0.040 + 0.0002 * (i % 2) for i in range(6)]
    # The RTT redrawn 40 -> 70 ms, seen as one step per direction of the path.
    halves = flat + [0.055 + 0.0002 * (i % 2) for i in range(3)] + [0.070] * 4
    assert path_steps(halves, 0.005) == [(6, pytest.approx(0.0148)), (9, pytest.approx(0.0148))]
    assert path_steps(list(reversed(halves)), 0.005)[0][1] < -0.005  # a shorter path
    # A queue of ours 10 % above capacity grows by about one packet time per packet.
    assert path_steps([0.040 + 0.0012 * i for i in range(20)], 0.005) == []
    # A 20 ms stall holds a run of ACKs, the oldest longest, then the RTT is back.
    assert path_steps(flat + [0.060, 0.056, 0.052, 0.048] + flat, 0.005) == []
    # Too near an end to tell a step from a stall that has not ended yet.
    assert path_steps(flat + [0.070], 0.005) == []
    assert path_steps(flat + [0.070, 0.070], 0.005) == [(6, pytest.approx(0.0298))]


def test_mi_gradient_is_fitted_without_a_path_step() -> None:
    """A path 30 ms longer inside an MI on a queue growing at 0.02: the regression reads a
    gradient of about 0.5; with the step taken out, the queue's own."""
    def mi_with_step(keep: bool) -> MonitorInterval:
        q = MonitorIntervalQueue(keep_samples=keep)
        mi = q.start(now=5.0, target_rate=1e6, duration=0.06, tag=None)
        for i in range(12):
            x = i * 0.005
            mi.packets_sent += 1
            mi.bytes_sent += 1000
            mi.last_sent = 5.0 + x
            mi.add_rtt_sample(5.0 + x, 0.040 + 0.02 * x + (0.030 if i >= 6 else 0.0))
        return mi

    raw = mi_with_step(False).result(now=6.0, min_packets=0, app_limited_ratio=0.0,
                                     path_step=0.005)
    assert raw.rtt_gradient > 0.4 and raw.rtt_path_step == 0.0  # no samples kept
    fitted = mi_with_step(True).result(now=6.0, min_packets=0, app_limited_ratio=0.0,
                                       path_step=0.005)
    assert fitted.rtt_gradient == pytest.approx(0.02, abs=0.005)
    assert fitted.rtt_path_step == pytest.approx(0.030, abs=0.001)
    assert fitted.rtt_gradient_stderr < raw.rtt_gradient_stderr
    assert fitted.rtt_gradient_minima == pytest.approx(0.02, abs=0.01)
    off = mi_with_step(True).result(now=6.0, min_packets=0, app_limited_ratio=0.0)
    assert off.rtt_gradient == pytest.approx(raw.rtt_gradient)


def test_mi_gradient_minima_needs_two_samples_in_each_half() -> None:
    mi = MonitorInterval(id=0, target_rate=1e6, tag=None, start_time=0.0, end_time=0.1)
    for x in (0.0, 0.01, 0.06):
        mi.add_rtt_sample(x, 0.05)
    assert mi.rtt_gradient_minima() is None  # a cut-short MI has no second half to compare
    mi.add_rtt_sample(0.07, 0.05)
    assert mi.rtt_gradient_minima() == 0.0


def test_mi_gradient_stderr_matches_the_textbook_formula() -> None:
    mi = MonitorInterval(id=0, target_rate=1e6, tag=None, start_time=10.0, end_time=11.0)
    assert mi.rtt_gradient_stderr() == math.inf  # fewer than 3 samples
    xs = [i * 0.001 for i in range(40)]
    ys = [0.030 + 0.02 * x + (0.004 if i % 3 == 0 else -0.002) for i, x in enumerate(xs)]
    for x, y in zip(xs, ys, strict=True):
        mi.add_rtt_sample(10.0 + x, y)
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    sse = sum((y - my - slope * (x - mx)) ** 2 for x, y in zip(xs, ys, strict=True))
    assert mi.rtt_gradient() == pytest.approx(slope, rel=1e-6)
    assert mi.rtt_gradient_stderr() == pytest.approx(math.sqrt(sse / (n - 2) / sxx), rel=1e-6)
    assert mi.rtt_mean == pytest.approx(my, rel=1e-9)
    exact = MonitorInterval(id=1, target_rate=1e6, tag=None, start_time=0.0, end_time=1.0)
    for i in range(10):
        exact.add_rtt_sample(i * 0.001, 0.03 + 0.1 * i * 0.001)  # a queue growing exactly
    assert exact.rtt_gradient_stderr() == pytest.approx(0.0, abs=1e-9)


def _mi_from(ys: list[float]) -> MonitorInterval:
    mi = MonitorInterval(id=0, target_rate=1e6, tag=None, start_time=0.0, end_time=0.03)
    for i, y in enumerate(ys):
        mi.add_rtt_sample(i * 0.03 / len(ys), y)
    return mi


def test_mi_residual_autocorr_matches_the_residuals_it_describes() -> None:
    rng = random.Random(7)
    n = 20
    xs = [i * 0.03 / n for i in range(n)]
    ys = [0.040 + 0.05 * x + rng.gauss(0.0, 0.001) for x in xs]
    mi = _mi_from(ys)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    e = [y - my - slope * (x - mx) for x, y in zip(xs, ys, strict=True)]
    raw = sum(a * b for a, b in zip(e, e[1:], strict=False)) / sum(v * v for v in e)
    assert mi.rtt_residual_autocorr() == pytest.approx((n * raw + 2) / (n - 4), rel=1e-6)
    mi.packets_sent, mi.bytes_sent, mi.last_sent = n, n * 1200, xs[-1]
    assert mi.result(now=1.0, min_packets=0, app_limited_ratio=0.0).rtt_residual_autocorr == (
        pytest.approx(mi.rtt_residual_autocorr()))


def test_mi_residual_autocorr_tells_white_noise_from_a_stall() -> None:
    rng = random.Random(3)
    white = [_mi_from([0.040 + rng.gauss(0.0, 0.001) for _ in range(12)])
             .rtt_residual_autocorr() or 0.0 for _ in range(400)]
    assert abs(sum(white) / len(white)) < 0.05  # the bias correction centres it on 0
    # A 6 ms host stall: the ACKs of packets sent during it come back together, the first
    # delayed most.
    stalled = [0.040 + rng.gauss(0.0, 0.0003) for _ in range(12)]
    for i, extra in zip(range(4, 9), (0.006, 0.005, 0.004, 0.003, 0.002), strict=True):
        stalled[i] += extra
    rho = _mi_from(stalled).rtt_residual_autocorr()
    assert rho is not None and rho > 0.5


def test_mi_residual_autocorr_needs_eight_samples_and_some_noise() -> None:
    assert _mi_from([0.04 + 0.001 * (i % 2) for i in range(7)]).rtt_residual_autocorr() is None
    assert _mi_from([0.04 + 0.001 * (i % 2) for i in range(8)]).rtt_residual_autocorr() == (
        pytest.approx(-1.0))  # alternating residuals
    assert _mi_from([0.04 + 0.1 * i * 0.001 for i in range(10)]).rtt_residual_autocorr() is None


def _queue_with_two_mis() -> MonitorIntervalQueue:
    q = MonitorIntervalQueue()
    q.start(now=0.0, target_rate=1e5, duration=0.1, tag="a")
    for i in range(10):
        q.on_sent(i * 0.01, 1000)
    q.start(now=0.1, target_rate=2e5, duration=0.1, tag="b")
    for i in range(10):
        q.on_sent(0.1 + i * 0.005, 1000)
    q.close_current(0.2)
    return q


def test_mi_finishes_when_every_fate_is_known_and_in_order() -> None:
    q = _queue_with_two_mis()
    # The second MI's fates all arrive first: it must wait for the first.
    for i in range(10):
        q.on_acked(0.2 + i * 0.005, 0.1 + i * 0.005, 1000)
    assert list(q.pop_finished()) == []
    for i in range(9):
        q.on_acked(0.15 + i * 0.01, i * 0.01, 1000)
    assert list(q.pop_finished()) == []
    q.on_lost(0.09, 1000)
    finished = list(q.pop_finished())
    assert [mi.tag for mi in finished] == ["a", "b"]
    r = finished[0].result(now=1.0, min_packets=5, app_limited_ratio=0.8)
    assert r.loss == pytest.approx(0.1) and r.useful
    assert r.send_rate == pytest.approx(1e5)  # 10 packets over 10 packet times
    assert r.rtt_mean == pytest.approx(0.15)


def test_mi_ignores_packets_of_unknown_mis_and_expiry_resolves() -> None:
    q = _queue_with_two_mis()
    q.on_acked(1.0, -5.0, 1000)  # sent before any MI (e.g. by a previous controller)
    assert q.find(-5.0) is None
    for i in range(10):
        q.on_expired(i * 0.01)
    mi = next(q.pop_finished())
    assert mi.packets_expired == 10 and mi.bytes_lost == 0


def test_mi_usefulness() -> None:
    mi = MonitorInterval(id=0, target_rate=1e5, tag=None, start_time=0.0, end_time=0.1)
    for i in range(3):
        mi.packets_sent += 1
        mi.bytes_sent += 1000
        mi.last_sent = i * 0.01
        mi.packets_acked += 1
        mi.add_rtt_sample(i * 0.01, 0.03)
    mi.sending_done = True
    assert mi.result(now=1, min_packets=5, app_limited_ratio=0.8).reason == "too-few-packets"
    # 3 packets over 0.5 s at a 100 kB/s target: the application ran dry.
    mi.last_sent = 0.5
    r = mi.result(now=1, min_packets=2, app_limited_ratio=0.8)
    assert not r.useful and r.reason == "app-limited"


def test_vivace_utility_matches_table_4_1() -> None:
    assert vivace_utility(10, 0.0, 0.0, t=0.9, b=900, c=11.35) == pytest.approx(10**0.9)
    u = vivace_utility(10, 0.02, 0.01, t=0.9, b=900, c=11.35)
    assert u == pytest.approx(10**0.9 - 900 * 10 * 0.02 - 11.35 * 10 * 0.01)
    assert filter_rtt_gradient(0.009, 0.01) == 0.0
    assert filter_rtt_gradient(-0.02, 0.01) == -0.02


def test_allegro_utilities() -> None:
    assert sigmoid(1e9, 1) == 0.0 and sigmoid(-1e9, 1) == 1.0
    no_loss = allegro_utility(10, 0.0)
    assert no_loss == pytest.approx(10 * sigmoid(-0.05, 100))
    # Past the 5% threshold the sigmoid collapses throughput's worth.
    assert allegro_utility(10, 0.03) > 0 > allegro_utility(10, 0.08)
    steady = allegro_latency_utility(10, 0.0, 0.05, 0.05)
    rising = allegro_latency_utility(10, 0.0, 0.06, 0.05)
    jitter = allegro_latency_utility(10, 0.0, 0.051, 0.05)  # within tolerance
    assert rising < steady
    # Inside the tolerance band only the division by RTT remains.
    assert jitter == pytest.approx(steady * 0.05 / 0.051)
    assert math.isfinite(allegro_latency_utility(10, 0.0, 0.0, 0.0))


def test_mi_that_sent_above_its_rate_is_not_used() -> None:
    # 20 packets of 1000 B at 200 kB/s take 0.1 s; the first 8 leave at once (the pacer's
    # bucket filled while the application was idle): sent 1.5 x the target rate.
    q = MonitorIntervalQueue()
    q.start(now=0.0, target_rate=2e5, duration=0.1, tag="burst")
    for i in range(20):
        q.on_sent(max(0.0, (i - 7) * 0.005), 1000)
    q.close_current(0.1)
    for i in range(20):
        q.on_acked(0.2 + i * 0.005, max(0.0, (i - 7) * 0.005), 1000)
    mi = next(q.pop_finished())
    r = mi.result(now=1.0, min_packets=5, app_limited_ratio=0.8, max_send_ratio=1.15)
    assert r.send_rate > 1.15 * 2e5 and not r.useful and r.reason == "burst"
    assert mi.result(now=1.0, min_packets=5, app_limited_ratio=0.8).useful  # 0 = off


def test_send_fill_is_the_share_of_the_mi_the_application_kept_it_sending() -> None:
    # One video frame: 10 packets of 1000 B at 1 MB/s (10 ms), then nothing until the MI's
    # 40 ms are up. The send rate reads the burst (1 MB/s); send_fill shows the idle rest.
    def frame_mi(*, close_at: float, room: bool) -> float:
        q = MonitorIntervalQueue()
        q.start(now=0.0, target_rate=1e6, duration=0.04, tag="frame")
        for i in range(10):
            q.on_sent(i * 0.001, 1000, window_room=room)
        q.close_current(close_at)
        for i in range(10):
            q.on_acked(0.05 + i * 0.001, i * 0.001, 1000)
        r = next(q.pop_finished()).result(now=0.1, min_packets=5, app_limited_ratio=0.8)
        assert r.useful and r.send_rate == pytest.approx(1e6)
        return r.send_fill

    assert frame_mi(close_at=0.5, room=True) == pytest.approx(0.25)  # closed at its end, 40 ms
    assert frame_mi(close_at=0.01, room=True) == pytest.approx(1.0)  # cut short after the frame
    assert frame_mi(close_at=0.5, room=False) == 1.0  # the window stopped it, not the app


def test_small_sample_factor_is_t_over_z() -> None:
    from pccstream.cc.utility import small_sample_factor
    assert small_sample_factor(2) == math.inf
    assert small_sample_factor(3) == pytest.approx(12.706 / 1.96, rel=1e-3)
    assert small_sample_factor(12) == pytest.approx(2.228 / 1.96, rel=1e-3)
    assert small_sample_factor(32) == pytest.approx(2.042 / 1.96, rel=2e-3)
    assert small_sample_factor(1000) == pytest.approx(1.0, abs=2e-3)

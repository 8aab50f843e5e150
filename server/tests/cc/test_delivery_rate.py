"""Delivery-rate sampler (draft-cheng-iccrg-delivery-rate-estimation), app-limited marking,
the idle detector and the windowed filters, on synthetic send/ack streams."""

from __future__ import annotations

import math

import pytest

from pccstream.cc.delivery_rate import DeliveryRateSampler, IdleDetector
from pccstream.cc.windowed_filter import MaxFilter, MinFilter

MSS = 1200
RATE = 1.5e6  # bytes/s (12 Mbit/s)
RTT = 0.03


def steady_stream(sampler: DeliveryRateSampler, n: int, *, start: float = 0.0,
                  rate: float = RATE) -> list[float]:
    """Send n packets paced at `rate`, each acked RTT later; return the sample rates."""
    gap = MSS / rate
    events: list[tuple[float, str, int]] = []
    for i in range(n):
        events.append((start + i * gap, "send", i))
        events.append((start + i * gap + RTT, "ack", i))
    rates = []
    for t, kind, i in sorted(events, key=lambda e: (e[0], e[1] == "send")):
        if kind == "send":
            sampler.on_packet_sent(t, i, MSS)
        else:
            assert sampler.on_packet_acked(t, i) is not None
            rs = sampler.generate(RTT * 0.999)  # float slack: intervals of exactly RTT
            if rs is not None:
                rates.append(rs.delivery_rate)
    return rates


def test_steady_stream_measures_the_sending_rate() -> None:
    s = DeliveryRateSampler()
    rates = steady_stream(s, 200)
    assert rates, "a full pipe yields samples"
    assert rates[-1] == pytest.approx(RATE, rel=0.02)
    assert max(rates) <= RATE * 1.02
    assert s.delivered == 200 * MSS and s.bytes_in_flight == 0


def test_intervals_shorter_than_min_rtt_are_discarded() -> None:
    # A sample over less than a min RTT is ACK-compression or burst noise (draft 3.3).
    s = DeliveryRateSampler()
    s.on_packet_sent(0.0, 0, MSS)
    s.on_packet_sent(0.001, 1, MSS)
    assert s.on_packet_acked(0.030, 0) is not None
    assert s.generate(0.050) is None  # 30 ms interval, 50 ms min RTT
    s.on_packet_acked(0.031, 1)
    rs = s.generate(0.030)  # 31 ms interval: one packet per RTT so far
    assert rs is not None and rs.interval == pytest.approx(0.031)
    assert rs.delivery_rate == pytest.approx(2 * MSS / 0.031)
    assert s.generate(0.030) is None  # nothing new acked


def test_ack_compression_does_not_inflate_the_rate() -> None:
    # Packets paced at 1.5 MB/s, acks bunched into one instant: the ack interval is tiny,
    # the send interval is not, and the sample takes the longer one.
    s = DeliveryRateSampler()
    gap = MSS / RATE
    for i in range(100):
        s.on_packet_sent(i * gap, i, MSS)
    now = 99 * gap + RTT
    best = 0.0
    for i in range(100):
        s.on_packet_acked(now, i)
        rs = s.generate(0.0)
        if rs is not None:
            best = max(best, rs.delivery_rate)
    assert best <= RATE * 1.03


def test_idle_period_is_not_counted_as_delivery_time() -> None:
    # After everything is acked the next send restarts both intervals, so a 1 s pause does
    # not turn into a low sample.
    s = DeliveryRateSampler()
    first = steady_stream(s, 100)
    again = steady_stream(s, 100, start=2.0)
    assert again == pytest.approx(first)


def test_app_limited_bubble_marks_packets_until_delivered() -> None:
    s = DeliveryRateSampler()
    for i in range(10):
        s.on_packet_sent(i * 0.001, i, MSS)
    s.on_app_limited()
    assert s.app_limited == 10 * MSS and s.is_app_limited
    s.on_packet_sent(0.02, 10, MSS)  # sent inside the bubble
    for i in range(10):
        s.on_packet_acked(0.03 + i * 0.001, i)
        s.generate(0.0)
    # All 10 bubble packets delivered: delivered == app_limited, not yet past it.
    assert s.is_app_limited
    s.on_packet_sent(0.045, 11, MSS)
    p11 = s._packets[11]
    assert p11.is_app_limited
    acked = s.on_packet_acked(0.05, 10)
    assert acked is not None and acked.is_app_limited
    rs = s.generate(0.0)
    assert rs is not None and rs.is_app_limited
    assert not s.is_app_limited  # the bubble is gone once more than it was delivered
    s.on_packet_sent(0.051, 12, MSS)
    assert not s._packets[12].is_app_limited


def test_app_limited_with_nothing_in_flight_still_marks() -> None:
    s = DeliveryRateSampler()
    s.on_app_limited()
    assert s.app_limited == 1  # the draft's "or 1": never 0 while marking
    s.on_packet_sent(0.0, 0, MSS)
    assert s._packets[0].is_app_limited


def test_lost_packets_leave_flight_without_delivery() -> None:
    s = DeliveryRateSampler()
    s.on_packet_sent(0.0, ("app", 0), MSS)
    s.on_packet_sent(0.0, ("handshake", 0), MSS)  # same number, other space
    s.on_packet_lost(("app", 0))
    assert s.bytes_in_flight == MSS and s.delivered == 0
    assert s.on_packet_acked(0.03, ("app", 0)) is None
    assert s.on_packet_acked(0.03, ("handshake", 0)) is not None
    assert s.delivered == MSS


# -- IdleDetector ---------------------------------------------------------------------------


def test_idle_detector_pacing_limited_sender_is_not_app_limited() -> None:
    d = IdleDetector()
    t = 0.0
    for _ in range(100):
        assert not d.before_send(t)
        d.after_send(t, room=True, pacing_interval=0.0008)
        t += 0.0008 + 0.003  # a few ms of event-loop jitter is tolerated
    assert not d.before_send(t)


def test_idle_detector_window_limited_wait_is_not_app_limited() -> None:
    d = IdleDetector()
    d.after_send(0.0, room=False, pacing_interval=0.0008)
    assert not d.before_send(0.5)  # blocked by the window: waiting for ACKs
    d.on_window_change(0.5, room=True)
    assert not d.before_send(0.501)  # sends as soon as the ACK opened the window


def test_idle_detector_silence_with_permission_is_app_limited() -> None:
    d = IdleDetector()
    d.after_send(0.0, room=True, pacing_interval=0.0008)
    assert d.before_send(0.05)
    # Window-blocked, then an ACK opens it and the sender stays silent.
    d.after_send(1.0, room=False, pacing_interval=0.0008)
    d.on_window_change(1.03, room=True)
    assert not d.before_send(1.035)
    assert d.before_send(1.2)


def test_idle_detector_gap_scales_with_slow_pacing() -> None:
    d = IdleDetector()
    d.after_send(0.0, room=True, pacing_interval=0.02)  # 60 kB/s: 20 ms per packet
    assert not d.before_send(0.055)  # within 2 packet intervals of the allowed time
    assert d.before_send(0.065)


# -- windowed filters -----------------------------------------------------------------------


def test_max_filter_keeps_the_best_within_the_window() -> None:
    f = MaxFilter(10)
    assert f.best() == 0.0 and f.empty
    f.update(5.0, 0)
    f.update(3.0, 1)
    f.update(4.0, 5)
    assert f.best() == 5.0
    f.update(2.0, 11)  # 5.0 (t=0) has aged out; a later runner-up takes over
    assert f.best() in (3.0, 4.0)
    for t in range(12, 30):
        f.update(1.0, t)
    assert f.best() == 1.0  # everything older than the window is gone
    f.update(9.0, 30)
    assert f.best() == 9.0 and f.second_best() == 9.0 and f.third_best() == 9.0


def test_max_filter_tracks_a_decreasing_sequence_within_a_window() -> None:
    f = MaxFilter(10)
    values = [float(100 - t) for t in range(60)]
    for t, v in enumerate(values):
        f.update(v, t)
        window = [values[i] for i in range(max(0, t - 10), t + 1)]
        # Never above the true windowed max, never older than the window.
        assert min(window) <= f.best() <= max(window)


def test_min_filter_for_rtt() -> None:
    f = MinFilter(10.0)
    assert math.isinf(f.best())
    f.update(0.030, 0.0)
    f.update(0.050, 3.0)
    assert f.best() == 0.030
    f.update(0.060, 10.5)
    assert f.best() == pytest.approx(0.050)
    f.reset(0.040, 11.0)
    assert f.best() == 0.040

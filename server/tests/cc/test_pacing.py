"""`ControllerPacing` on its own: no QUIC connection, a controller and a clock."""

from __future__ import annotations

import pytest

from pccstream.cc import create_controller
from pccstream.cc.pacing import PACING_WAKE_QUANTUM, ControllerPacing
from pccstream.cc.pcc_sender import PccSender


def _paced_vivace(rate: float) -> ControllerPacing:
    controller = create_controller("vivace", seed=1)
    assert isinstance(controller, PccSender)
    controller.bind(max_datagram_size=1200, now=0.0)
    controller._mi_rate = rate  # what the start of a new MI does
    controller.pacing_version += 1
    return ControllerPacing(controller, max_datagram_size=1200, smoothed_rtt=lambda: 0.03)


def test_unpaced_until_the_controller_has_a_rate() -> None:
    controller = create_controller("cubic", seed=1)
    controller.bind(max_datagram_size=1200, now=0.0)
    pacing = ControllerPacing(controller, max_datagram_size=1200, smoothed_rtt=lambda: 0.0)
    assert pacing.next_send_time(1.0) is None and pacing.rate is None


def test_pacing_follows_rate_changes() -> None:
    pacing = _paced_vivace(123_456.0)
    pacing.next_send_time(0.0)
    assert pacing.rate == 123_456.0
    assert pacing.packet_time == pytest.approx(1200 / 123_456.0)


def test_pacer_sleeps_for_a_quantum_of_credit_and_keeps_the_rate() -> None:
    pacing = _paced_vivace(1_500_000.0)  # 12 Mbit/s: 0.8 ms per 1200-byte packet
    now, sent = 10.0, 0
    pacing.next_send_time(now)
    pacing.bucket_time = 0.0
    wakeups = 0
    while now < 11.0:
        wait = pacing.next_send_time(now)
        if wait is None:
            pacing.update_after_send(now)
            sent += 1
            continue
        # Empty bucket: the timer is set for PACING_WAKE_QUANTUM packets, not one.
        assert pacing.packet_time is not None
        assert wait - now == pytest.approx(PACING_WAKE_QUANTUM * pacing.packet_time, rel=0.01)
        now, wakeups = wait, wakeups + 1
    assert sent == pytest.approx(1250, rel=0.01)  # the rate holds
    assert wakeups == pytest.approx(1250 / PACING_WAKE_QUANTUM, rel=0.01)


def _burst(pacing: ControllerPacing, now: float) -> int:
    """Packets the pacer lets go back to back at `now`."""
    sent = 0
    while pacing.next_send_time(now) is None and sent < 100:
        pacing.update_after_send(now)
        sent += 1
    return sent


def test_window_controllers_send_their_initial_window_at_once() -> None:
    # Cubic's first flight (10 packets, RFC 9002 section 7.7) leaves in one burst after an
    # idle spell, as the first chunk of a video does; aioquic's sizing alone allowed 2.
    controller = create_controller("cubic", seed=1)
    controller.bind(max_datagram_size=1200, now=0.0)
    assert controller.congestion_window == 12_000
    pacing = ControllerPacing(controller, max_datagram_size=1200, smoothed_rtt=lambda: 0.08)
    assert _burst(pacing, 10.0) == 10
    assert pacing.next_send_time(10.0) is not None  # the 11th waits for credit


def test_rate_based_controllers_keep_the_pacers_burst_sizing() -> None:
    pacing = _paced_vivace(1_500_000.0)
    pacing.next_send_time(0.0)
    # A quarter of the rate's BDP (1.5 MB/s x 30 ms = 45 kB): 9 packets, not a window.
    assert _burst(pacing, 10.0) == 9


def test_a_burst_cap_limits_the_catch_up_after_a_stall() -> None:
    # A stall of 10 ms accrues 8 packets of credit at 12 Mbit/s; the pacer's own sizing
    # (9 packets) would spend it at once, the controller's cap lets 2 go.
    pacing = _paced_vivace(1_500_000.0)
    pacing.controller.max_burst_packets = 2
    pacing.controller.pacing_version += 1
    pacing.next_send_time(0.0)
    pacing.bucket_time = 0.0
    assert _burst(pacing, 0.010) == 2
    # Credit keeps accruing while it sends, so the long-run rate holds.
    sent, now = 0, 0.010
    while now < 1.010:
        wait = pacing.next_send_time(now)
        if wait is None:
            pacing.update_after_send(now)
            sent += 1
        else:
            now = wait
    assert sent == pytest.approx(1250, rel=0.01)


def test_a_burst_cap_never_raises_the_pacers_sizing() -> None:
    pacing = _paced_vivace(1_500_000.0)
    pacing.controller.max_burst_packets = 50
    pacing.controller.pacing_version += 1
    pacing.next_send_time(0.0)
    assert _burst(pacing, 10.0) == 9


def test_pcc_takes_its_burst_cap_from_a_session_parameter() -> None:
    controller = create_controller("vivace", {"pacing_burst_packets": "3"}, seed=1)
    assert controller.max_burst_packets == 3
    assert create_controller("vivace", seed=1).max_burst_packets == 0


def _send_times(pacing: ControllerPacing, start: float, until: float) -> list[float]:
    times, now = [], start
    while now < until:
        wait = pacing.next_send_time(now)
        if wait is None:
            pacing.update_after_send(now)
            times.append(now)
        else:
            now = wait
    return times


def test_a_catch_up_gain_spreads_the_credit_saved_over_a_stall() -> None:
    pacing = _paced_vivace(1_500_000.0)  # 0.8 ms per packet
    pacing.controller.pacing_catch_up_gain = 1.25
    pacing.controller.pacing_version += 1
    pacing.next_send_time(0.0)
    pacing.bucket_time = 0.0
    # The stall saved 8 packets of credit: a pair goes at once, the rest at 1.25 x the rate.
    times = _send_times(pacing, 0.010, 0.020)
    assert times[0] == times[1] == 0.010
    gaps = [b - a for a, b in zip(times[1:8], times[2:9], strict=True)]
    assert gaps == pytest.approx([0.0008 / 1.25] * 7, rel=0.01)
    # Nothing is lost: over a second the rate holds, as without the gain.
    assert len(_send_times(pacing, 0.020, 1.010)) == pytest.approx(1240, rel=0.01)


def test_a_catch_up_gain_leaves_a_sender_that_keeps_pace_alone() -> None:
    def wakeups(gain: float) -> tuple[int, int]:
        pacing = _paced_vivace(1_500_000.0)
        pacing.controller.pacing_catch_up_gain = gain
        pacing.controller.pacing_version += 1
        pacing.next_send_time(10.0)
        pacing.bucket_time = 0.0  # pacing-bound: no credit saved
        times = _send_times(pacing, 10.0, 11.0)
        return len(times), len(set(times))

    sent, wakes = wakeups(1.1)
    assert (sent, wakes) == wakeups(0.0)
    assert sent == pytest.approx(1250, rel=0.01) and wakes == sent // 2  # pairs, as before

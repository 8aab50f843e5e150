"""ACK silences and their verdicts (`pccstream.cc.ack_silence`)."""

from __future__ import annotations

import pytest

from pccstream.cc.ack_silence import AckSilences

MIN_RTT = 0.040
GRACE = 0.040


def _silence(acks_after: list[tuple[float, float]], *, first_sent: float = 1.10,
             end: float = 1.50, queue_rtts: float = 0.0, growth_s: float = 0.0
             ) -> AckSilences:
    """The last ACK at 1.0 s, a packet sent in the silence at `first_sent`, the silence
    ending at `end` with an ACK of a packet sent before it (the window having grown by
    `growth_s` of receive rate), then `acks_after`: (ACK time, the acknowledged packet's
    send time)."""
    s = AckSilences(weight=0.25, queue_rtts=queue_rtts)
    s.on_acked(1.0, 0.95, MIN_RTT)
    s.on_sent(1.02, GRACE)  # within the grace: not the silence's
    s.on_sent(first_sent, GRACE)
    s.on_acked(end, 0.97, MIN_RTT, growth_s=growth_s)
    for now, sent in acks_after:
        s.on_acked(now, sent, MIN_RTT)
    return s


def test_packets_sent_in_the_silence_acked_with_the_release_were_held() -> None:
    s = _silence([(1.501, 0.99), (1.502, 1.10)])
    assert (s.holds, s.outages, s.hold_share) == (1, 0, 1.0)


def test_packets_acked_only_after_a_backlog_were_behind_an_outage() -> None:
    s = _silence([(1.51, 0.99), (1.53, 1.00), (1.56, 1.10)])  # 60 ms after the end
    assert (s.holds, s.outages) == (0, 1)
    assert s.hold_share == pytest.approx(0.75)


def test_no_packet_of_the_silence_acked_soon_is_an_outage_too() -> None:
    s = _silence([(1.51, 0.99), (1.60, 1.00)])
    assert s.outages == 1


def test_a_silence_whose_packet_left_within_a_min_rtt_of_its_end_is_not_judged() -> None:
    s = _silence([(1.60, 1.00), (1.70, 1.47)], first_sent=1.47)
    assert (s.holds, s.outages) == (0, 0)


def test_the_grace_starts_after_the_last_ack() -> None:
    s = AckSilences(weight=0.25)
    assert s.silence_start(GRACE) is None
    s.on_acked(2.0, 1.9, MIN_RTT)
    assert s.silence_start(GRACE) == pytest.approx(2.04)


RELEASED = [(1.501, 0.99), (1.502, 1.10)]  # the silence's packet came back with the release


def test_with_the_queue_test_a_release_waits_for_the_next_packets_rtt() -> None:
    s = _silence(RELEASED, queue_rtts=4)
    assert (s.holds, s.outages) == (0, 0)
    s.on_acked(1.55, 1.505, MIN_RTT)  # sent after the end, back at the min RTT + 5 ms
    assert (s.holds, s.outages, s.hold_share) == (1, 0, 1.0)


def test_a_release_followed_by_a_backlog_was_an_outage_of_both_directions() -> None:
    """The downlink came back before the uplink: the release looked like a hold, but the
    first packet after it waited 200 ms (5 min RTTs) behind what queued in the outage."""
    s = _silence([*RELEASED, (1.745, 1.505)], queue_rtts=4)
    assert (s.holds, s.outages) == (0, 1)


def test_the_queue_test_allows_half_of_the_growths_own_queue() -> None:
    """A long held silence grew the window by 0.6 s of receive rate; uplink jitter behind
    the release may cost the next packet up to half that without an outage verdict."""
    s = _silence([*RELEASED, (1.745, 1.505)], queue_rtts=4, growth_s=0.6)
    assert (s.holds, s.outages) == (1, 0)


def test_a_new_silence_is_not_judged_while_the_queue_test_waits() -> None:
    s = _silence(RELEASED, queue_rtts=4)
    s.on_sent(1.60, GRACE)  # a second silence's packet, before the next packet's ACK
    s.on_acked(1.69, 1.40, MIN_RTT)  # its end: a packet sent before the first silence ended
    assert (s.holds, s.outages) == (0, 0)
    s.on_acked(1.70, 1.505, MIN_RTT)  # 155 ms above the min RTT: within 4 min RTTs
    assert (s.holds, s.outages) == (1, 0)


def _last_packet_silence(acks_after: list[tuple[float, float]], *, last_sent: float = 1.45
                         ) -> AckSilences:
    """As `_silence` with the last-packet queue test, a packet sent at 1.10 and another at
    `last_sent`, the last before the silence ended at 1.50."""
    s = AckSilences(weight=0.25, queue_rtts=4, queue_last=True)
    s.on_acked(1.0, 0.95, MIN_RTT)
    s.on_sent(1.10, GRACE)
    s.on_sent(last_sent, GRACE)
    s.on_acked(1.50, 0.97, MIN_RTT)
    for now, sent in acks_after:
        s.on_acked(now, sent, MIN_RTT)
    return s


def test_the_last_packet_test_waits_for_the_last_packet_sent_into_the_silence() -> None:
    s = _last_packet_silence(RELEASED)
    assert (s.holds, s.outages) == (0, 0)
    s.on_acked(1.545, 1.45, MIN_RTT)  # due with the release (1.49 < 1.50): 45 ms late
    assert (s.holds, s.outages) == (1, 0)


def test_the_last_packet_behind_the_growths_backlog_is_an_outage() -> None:
    """The blind spot of the first-packet test: the backlog held the window full, so no
    packet left after the silence before it drained, but the last one sent into the
    silence came back only after it, 200 ms (5 min RTTs) after the release."""
    s = _last_packet_silence([*RELEASED, (1.60, 1.20), (1.70, 1.45)])
    assert (s.holds, s.outages) == (0, 1)


def test_the_last_packet_is_judged_overdue_without_its_ack() -> None:
    """It may be lost in the outage: the silence is an outage once any ACK comes more than
    4 min RTTs after the packet was due."""
    s = _last_packet_silence([*RELEASED, (1.60, 1.20)])
    assert (s.holds, s.outages) == (0, 0)
    s.on_acked(1.65, 1.30, MIN_RTT)  # due with the release: 150 ms overdue, within 160
    assert (s.holds, s.outages) == (0, 0)
    s.on_acked(1.70, 1.31, MIN_RTT)
    assert (s.holds, s.outages) == (0, 1)


def test_a_last_packet_left_long_before_the_end_is_due_with_the_release() -> None:
    """The growth had reached its cap: the last packet left 300 ms before a hold's end and
    its ACK came with the release, not a min RTT after it left."""
    s = _last_packet_silence([*RELEASED, (1.503, 1.20)], last_sent=1.20)
    assert (s.holds, s.outages) == (1, 0)


def test_a_silence_with_one_packet_is_judged_by_the_release_alone() -> None:
    s = _last_packet_silence(RELEASED, last_sent=1.10)
    assert (s.holds, s.outages) == (1, 0)

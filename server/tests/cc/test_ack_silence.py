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

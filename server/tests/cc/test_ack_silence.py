"""ACK silences and their verdicts (`pccstream.cc.ack_silence`)."""

from __future__ import annotations

import pytest

from pccstream.cc.ack_silence import AckSilences

MIN_RTT = 0.040
GRACE = 0.040


def _silence(acks_after: list[tuple[float, float]], *, first_sent: float = 1.10,
             end: float = 1.50) -> AckSilences:
    """The last ACK at 1.0 s, a packet sent in the silence at `first_sent`, the silence
    ending at `end` with an ACK of a packet sent before it, then `acks_after`: (ACK time,
    the acknowledged packet's send time)."""
    s = AckSilences(weight=0.25)
    s.on_acked(1.0, 0.95, MIN_RTT)
    s.on_sent(1.02, GRACE)  # within the grace: not the silence's
    s.on_sent(first_sent, GRACE)
    s.on_acked(end, 0.97, MIN_RTT)
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

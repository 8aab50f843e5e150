"""`aimd`: the contest's exercise B, additive increase / multiplicative decrease.

Increase: `alpha` packets per RTT (alpha / window per acknowledged packet).
Decrease: window x `beta` on a timeout. The contest's sender (datagrump) had no loss
detection beyond its ACK timeout, so a "timeout" here is any of QUIC's equivalents:
a packet declared lost (RFC 9002's time/packet thresholds), a PTO (aioquic abandons the
oldest packet: `on_packets_expired`), or an ACK that came back more than `timeout_ms` after
its packet was sent (datagrump's timeout). At most one decrease per round trip: signals
about packets sent before the last decrease were caused by the old window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .base import SentPacket
from .packet_window import PacketWindowController
from .params import param


@dataclass(frozen=True)
class AimdParams:
    alpha: float = param(1.0, "additive increase (packets per RTT)", lo=0.0, hi=100.0)
    beta: float = param(0.5, "multiplicative decrease factor on a timeout", lo=0.05, hi=1.0)
    timeout_ms: float = param(1000.0, "an ACK later than this counts as a timeout (ms)",
                              lo=10.0, hi=60_000.0)
    initial_window: float = param(10.0, "initial window (packets)", lo=1.0, hi=1000.0)
    min_window: float = param(1.0, "window floor (packets)", lo=1.0, hi=1000.0)


class Aimd(PacketWindowController):
    name = "aimd"

    def __init__(self, params: AimdParams | None = None) -> None:
        self.params = params or AimdParams()
        super().__init__(self.params.initial_window, min_window=self.params.min_window)
        # Send time of the newest packet when the window last decreased: signals about
        # packets sent up to then were caused by the old window.
        self._last_decrease: float | None = None
        self._last_sent = 0.0
        self.decreases = 0

    def on_packet_sent(self, now: float, packet: SentPacket) -> None:
        super().on_packet_sent(now, packet)
        self._last_sent = now

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        super().on_packet_acked(now, packet)
        sent = packet.sent_time
        if sent is not None and now - sent > self.params.timeout_ms / 1000:
            self._timeout(sent)
        else:
            self.set_window(self.window + self.params.alpha / self.window)

    def on_packets_lost(self, now: float, packets: Sequence[SentPacket]) -> None:
        super().on_packets_lost(now, packets)
        self._timeout(_newest_sent(packets))

    def on_packets_expired(self, packets: Sequence[SentPacket]) -> None:
        super().on_packets_expired(packets)
        if packets:
            self._timeout(_newest_sent(packets))

    def _timeout(self, sent_time: float | None) -> None:
        if (self._last_decrease is not None and sent_time is not None
                and sent_time <= self._last_decrease):
            return  # already reacted to this round trip
        self._last_decrease = self._last_sent
        self.decreases += 1
        self.set_window(self.window * self.params.beta)


def _newest_sent(packets: Sequence[SentPacket]) -> float | None:
    times = [p.sent_time for p in packets if p.sent_time is not None]
    return max(times) if times else None

"""`delay-threshold`: the contest's exercise C, additive increase / additive decrease around
a fixed RTT threshold.

Per acknowledged packet: RTT below `threshold_ms` -> window + alpha / window, else window -
beta / window; i.e. alpha packets per RTT up, beta packets per RTT down (AIAD). The RTT is
the packet's own (send to ACK), as the contest's controller saw it, so the threshold
includes the path's propagation delay (40 ms round trip in the contest setup).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import SentPacket
from .packet_window import PacketWindowController
from .params import param


@dataclass(frozen=True)
class DelayThresholdParams:
    threshold_ms: float = param(90.0, "RTT threshold (ms)", lo=1.0, hi=10_000.0)
    alpha: float = param(1.0, "increase below the threshold (packets per RTT)", lo=0.0,
                         hi=100.0)
    beta: float = param(10.0, "decrease above the threshold (packets per RTT)", lo=0.0,
                        hi=1000.0)
    initial_window: float = param(10.0, "initial window (packets)", lo=1.0, hi=1000.0)
    min_window: float = param(1.0, "window floor (packets)", lo=1.0, hi=1000.0)


class DelayThreshold(PacketWindowController):
    name = "delay-threshold"

    def __init__(self, params: DelayThresholdParams | None = None) -> None:
        self.params = params or DelayThresholdParams()
        super().__init__(self.params.initial_window, min_window=self.params.min_window)

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        super().on_packet_acked(now, packet)
        if packet.sent_time is None:
            return
        rtt = now - packet.sent_time
        if rtt < self.params.threshold_ms / 1000:
            self.set_window(self.window + self.params.alpha / self.window)
        else:
            self.set_window(self.window - self.params.beta / self.window)

"""`rocinante`: delay-based AIAD in the style of the contest's best hand-written schemes.

It keeps an EWMA of the per-packet RTT (`weight` 0.01 per acknowledged packet: a smoothed
view over roughly the last hundred packets, so a single late ACK does not trigger a
decrease) and compares it with `allowance` x the minimum RTT seen: within the allowance ->
window + alpha / window per acknowledged packet (alpha packets per RTT), beyond it ->
window - beta / window (beta packets per RTT). It aims at a standing queue of 40 % of the
propagation delay.

The write-up gives only the parameters, so there is a second reading: with
`spike_reference` each packet's RTT is compared with allowance x the EWMA instead (the EWMA
as a slow baseline: only delay *spikes* back off, a delay that settles becomes the new
baseline). docs/baselines.md compares both on the contest trace.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import SentPacket
from .packet_window import PacketWindowController
from .params import param


@dataclass(frozen=True)
class RocinanteParams:
    weight: float = param(0.01, "EWMA weight of each new RTT sample", lo=0.0001, hi=1.0)
    allowance: float = param(1.4, "target: smoothed RTT <= allowance x min RTT", lo=1.0,
                             hi=10.0)
    alpha: float = param(2.0, "increase (packets per RTT)", lo=0.0, hi=100.0)
    beta: float = param(5.0, "decrease (packets per RTT)", lo=0.0, hi=1000.0)
    initial_window: float = param(10.0, "initial window (packets)", lo=1.0, hi=1000.0)
    min_window: float = param(2.0, "window floor (packets)", lo=1.0, hi=1000.0)
    spike_reference: bool = param(False, "compare each RTT with allowance x the EWMA "
                                  "instead of the EWMA with allowance x min RTT")


class Rocinante(PacketWindowController):
    name = "rocinante"

    def __init__(self, params: RocinanteParams | None = None) -> None:
        self.params = params or RocinanteParams()
        super().__init__(self.params.initial_window, min_window=self.params.min_window)
        self.rtt_ewma: float | None = None
        self.min_rtt = float("inf")

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        super().on_packet_acked(now, packet)
        if packet.sent_time is None:
            return
        rtt = now - packet.sent_time
        self.min_rtt = min(self.min_rtt, rtt)
        w = self.params.weight
        self.rtt_ewma = rtt if self.rtt_ewma is None else (1 - w) * self.rtt_ewma + w * rtt
        if self.params.spike_reference:
            within = rtt <= self.params.allowance * self.rtt_ewma
        else:
            within = self.rtt_ewma <= self.params.allowance * self.min_rtt
        if within:
            self.set_window(self.window + self.params.alpha / self.window)
        else:
            self.set_window(self.window - self.params.beta / self.window)

    def log_data(self) -> dict[str, float]:
        data = super().log_data()
        if self.rtt_ewma is not None:
            data["rtt_ewma_ms"] = round(self.rtt_ewma * 1000, 3)
        return data

"""`ewma-bdp`: window = gain x EWMA receive rate x min RTT, within [min, max] packets.

The receive rate is measured from the spacing of ACK arrivals (receive_rate.py). That
average is the flow's own throughput, window / RTT,
so at `gain` 1 a window below the BDP would measure exactly its own rate and never grow
(and any dip would ratchet it down). The default gain of 1.25 is what finds spare capacity:
below the BDP the window grows by 25 % per averaging time; at the bottleneck the receive
rate stops growing and the window settles at 1.25 x BDP, a standing queue of a quarter of
the min RTT.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import SentPacket
from .packet_window import PacketWindowController
from .params import param
from .receive_rate import ReceiveRate


@dataclass(frozen=True)
class EwmaBdpParams:
    weight: float = param(0.125, "EWMA weight of each ACK group", lo=0.001, hi=1.0)
    gain: float = param(1.25, "window = gain x rate x min RTT (> 1 to find spare capacity)",
                        lo=0.1, hi=10.0)
    min_window: float = param(4.0, "window floor (packets)", lo=1.0, hi=1000.0)
    max_window: float = param(1000.0, "window cap (packets)", lo=1.0, hi=100_000.0)
    initial_window: float = param(10.0, "window until the first rate sample (packets)",
                                  lo=1.0, hi=1000.0)


class EwmaBdp(PacketWindowController):
    name = "ewma-bdp"

    def __init__(self, params: EwmaBdpParams | None = None) -> None:
        self.params = params or EwmaBdpParams()
        p = self.params
        super().__init__(p.initial_window, min_window=p.min_window, max_window=p.max_window)
        self._receive = ReceiveRate(p.weight)
        self.min_rtt = float("inf")

    @property
    def receive_rate(self) -> float:
        """Bytes per second (0 before the first sample)."""
        return self._receive.rate

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        super().on_packet_acked(now, packet)
        if packet.sent_time is not None:
            self.min_rtt = min(self.min_rtt, now - packet.sent_time)
        if self._receive.on_acked(now, packet.sent_bytes):
            rate = self.receive_rate
            if rate > 0 and self.min_rtt < float("inf"):
                bdp_packets = self.params.gain * rate * self.min_rtt / self.max_datagram_size
                self.set_window(bdp_packets)

    def log_data(self) -> dict[str, float]:
        data = super().log_data()
        data["receive_rate_bps"] = round(self.receive_rate * 8)
        return data

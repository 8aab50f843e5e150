"""Shared plumbing of the contest's small window-based schemes (fixed, aimd,
delay-threshold, rocinante, ewma-bdp): a window counted in packets, as the contest's
datagrump controllers did, and the same outputs and telemetry as every other controller.

The schemes only decide the window. Like every window-based arm they go through the
project's pacer, at `base.WINDOW_PACING_GAIN_SLOW_START` (2x) cwnd / srtt since they have no
ssthresh: the originals were purely ACK-clocked, and pacing at twice the window's rate only
smooths bursts, leaving the window as the binding limit.
"""

from __future__ import annotations

import math

from .base import Controller, SentPacket
from .window import DeliveryMeter


class PacketWindowController(Controller):
    """A window of `window` packets (a float: additive rules move it by fractions)."""

    is_rate_based = False

    def __init__(self, window: float, *, min_window: float = 1.0,
                 max_window: float = 100_000.0) -> None:
        super().__init__()
        self.min_window = min_window
        self.max_window = max_window
        self.window = self._clamp(window)
        self._meter = DeliveryMeter()
        self._last_cwnd = self.congestion_window

    def _clamp(self, window: float) -> float:
        return min(max(window, self.min_window), self.max_window)

    def set_window(self, window: float) -> None:
        self.window = self._clamp(window)
        cwnd = self.congestion_window
        if cwnd != self._last_cwnd:
            self._last_cwnd = cwnd
            self.pacing_version += 1

    @property
    def congestion_window(self) -> int:
        # Whole packets, rounded up: a sender only sends full packets, so a floor would turn
        # a window of 4.6 into 4 and a rule that grows by less than one packet per RTT
        # (e.g. ewma-bdp near its minimum) could never reach the next packet. At least one.
        packets = max(1, math.ceil(self.window - 1e-9))
        return packets * self.max_datagram_size

    def delivery_rate(self) -> float:
        return self._meter.rate

    def bind(self, *, max_datagram_size: int, now: float | None = None) -> None:
        super().bind(max_datagram_size=max_datagram_size, now=now)
        self._last_cwnd = self.congestion_window

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        super().on_packet_acked(now, packet)
        self._meter.on_acked(now, packet.sent_bytes, self.rtt_stats.srtt_or_initial())

    def log_data(self) -> dict[str, float]:
        return {"window_packets": round(self.window, 3)}

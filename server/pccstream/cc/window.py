"""aioquic's own Reno and Cubic as window-based `Controller`s.

They run unchanged (the arms of the comparison must be aioquic's algorithms), behind the
same interface and the same pacer as PCC: the pacer derives their rate from cwnd / srtt,
and `pacing_version` changes whenever their window does, so it refreshes on every window
change rather than only on RTT samples as stock aioquic does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from aioquic.quic.congestion import cubic as _cubic  # noqa: F401 - registers "cubic"
from aioquic.quic.congestion import reno as _reno  # noqa: F401 - registers "reno"
from aioquic.quic.congestion.base import QuicCongestionControl, create_congestion_control
from aioquic.quic.packet_builder import QuicSentPacket

from .base import Controller, SentPacket

WINDOW_ALGORITHMS = ("reno", "cubic")


class DeliveryMeter:
    """Delivered bytes per second over windows of about one smoothed RTT (telemetry only)."""

    def __init__(self) -> None:
        self._start: float | None = None
        self._bytes = 0
        self.rate = 0.0

    def on_acked(self, now: float, size: int, srtt: float) -> None:
        if self._start is None:
            self._start = now
        self._bytes += size
        span = now - self._start
        if span >= max(srtt, 0.01):
            self.rate = self._bytes / span
            self._start, self._bytes = now, 0


# The initial window of aioquic's Reno and Cubic, in packets (K_INITIAL_WINDOW).
INITIAL_WINDOW_PACKETS = 10


class WindowController(Controller):
    is_rate_based = False
    # A first flight (the first chunk of a video on an idle connection) goes out at once, as
    # RFC 9002 section 7.7 allows for up to the initial window and quiche does
    # (kInitialUnpacedBurst = 10), rather than a quarter of it at a time: paced at 2 x
    # cwnd / srtt from a 2.5-packet bucket, the 10th packet left 0.37 RTT after the 1st.
    burst_packets = INITIAL_WINDOW_PACKETS

    def __init__(self, algorithm: str) -> None:
        super().__init__()
        if algorithm not in WINDOW_ALGORITHMS:
            raise ValueError(f"unknown window algorithm {algorithm!r}")
        self.name = algorithm
        self._cc: QuicCongestionControl = create_congestion_control(
            algorithm, max_datagram_size=self.max_datagram_size)
        self._meter = DeliveryMeter()
        self._last_cwnd = self._cc.congestion_window

    def bind(self, *, max_datagram_size: int, now: float | None = None) -> None:
        super().bind(max_datagram_size=max_datagram_size, now=now)
        # The window algorithms size their initial window from the datagram size.
        if self.bytes_sent == 0:
            self._cc = create_congestion_control(self.name, max_datagram_size=max_datagram_size)
            self._changed()

    def _changed(self) -> None:
        cwnd = self._cc.congestion_window
        if cwnd != self._last_cwnd:
            self._last_cwnd = cwnd
            self.pacing_version += 1

    @property
    def congestion_window(self) -> int:
        return self._cc.congestion_window

    @property
    def ssthresh(self) -> int | None:
        return self._cc.ssthresh

    def delivery_rate(self) -> float:
        return self._meter.rate

    def log_data(self) -> dict[str, Any]:
        return {k: v for k, v in self._cc.get_log_data().items()
                if k not in ("cwnd", "bytes_in_flight")}

    # aioquic's algorithms read only `sent_bytes` and `sent_time`, which any SentPacket has.
    def on_packet_sent(self, now: float, packet: SentPacket) -> None:
        super().on_packet_sent(now, packet)
        self._cc.on_packet_sent(packet=cast(QuicSentPacket, packet))

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        super().on_packet_acked(now, packet)
        self._meter.on_acked(now, packet.sent_bytes, self.rtt_stats.srtt_or_initial())
        self._cc.on_packet_acked(now=now, packet=cast(QuicSentPacket, packet))
        self._changed()

    def on_packets_lost(self, now: float, packets: Sequence[SentPacket]) -> None:
        super().on_packets_lost(now, packets)
        self._cc.on_packets_lost(now=now, packets=cast(Sequence[QuicSentPacket], packets))
        self._changed()

    def on_packets_expired(self, packets: Sequence[SentPacket]) -> None:
        super().on_packets_expired(packets)
        self._cc.on_packets_expired(packets=cast(Sequence[QuicSentPacket], packets))

    def on_rtt_sample(self, now: float, latest_rtt: float) -> None:
        self._cc.on_rtt_measurement(now=now, rtt=latest_rtt)
        self._changed()

    def on_persistent_congestion(self) -> None:
        self._cc.on_persistent_congestion()
        self._changed()

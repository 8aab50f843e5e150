"""The controller interface every algorithm implements (cf. quiche's SendAlgorithmInterface).

A controller sees only the packets sent while it is installed, one call per event, and
exposes two outputs: a congestion window (bytes the sender may have in flight) and, for
rate-based controllers, a pacing rate. The aioquic adapter and the simulator are the only
callers; neither knows which algorithm it drives.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .rtt_stats import RttStats

# aioquic's default (and QUIC's minimum) datagram size; `bind` replaces it.
DEFAULT_MAX_DATAGRAM_SIZE = 1200

EventSink = Callable[[dict[str, Any]], None]

# Pacing of window-based controllers at cwnd/srtt times a gain, as Linux does (200% in
# slow start, 120% after): pacing at exactly cwnd/srtt would keep a growing window from
# ever being filled within one RTT.
WINDOW_PACING_GAIN_SLOW_START = 2.0
WINDOW_PACING_GAIN = 1.2


class SentPacket(Protocol):
    """What a controller reads from a sent packet (aioquic's QuicSentPacket fits)."""

    @property
    def packet_number(self) -> int: ...

    @property
    def sent_time(self) -> float | None: ...

    @property
    def sent_bytes(self) -> int: ...


class Controller(abc.ABC):
    """One congestion controller for one connection.

    Subclasses set `is_rate_based`; rate-based ones report `pacing_rate` (bytes/s) and
    use the window only as a safety cap, window-based ones leave pacing to the caller
    (cwnd / srtt). `pacing_version` changes whenever either output changes, so a pacer can
    refresh cheaply on every send instead of only on RTT samples.
    """

    name: str = "controller"
    is_rate_based: bool = False
    # Packets the pacer may send back to back while the window allows them (0: the pacer's
    # own burst sizing only). RFC 9002 section 7.7 limits bursts to the initial window.
    burst_packets: int = 0
    # The most packets the pacer releases back to back after the sender could not send (a
    # host stall, an idle application), within its own sizing (0: that sizing alone).
    max_burst_packets: int = 0
    # Credit saved while the sender could not send goes out at this multiple of the rate,
    # beyond a first pair back to back (0: back to back, as far as the bucket allows).
    pacing_catch_up_gain: float = 0.0

    def __init__(self) -> None:
        self.max_datagram_size = DEFAULT_MAX_DATAGRAM_SIZE
        self.rtt_stats = RttStats()
        self.pacing_version = 0
        self.t0: float | None = None
        self.event_sink: EventSink | None = None
        # Counters of this controller's own packets, for telemetry.
        self.bytes_in_flight = 0
        self.bytes_sent = 0
        self.bytes_acked = 0
        self.bytes_lost = 0
        # The connection's clock (the `now` its events carry), for a window that grows with
        # time alone; None where the caller drives time only through events.
        self.clock: Callable[[], float] | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def bind(self, *, max_datagram_size: int, now: float | None = None) -> None:
        """Attach to a connection: learn its datagram size and the telemetry origin."""
        self.max_datagram_size = max_datagram_size
        if now is not None:
            self.t0 = now

    # -- events (own packets only) --------------------------------------------------------

    def on_packet_sent(self, now: float, packet: SentPacket) -> None:
        if self.t0 is None:
            self.t0 = now
        self.bytes_in_flight += packet.sent_bytes
        self.bytes_sent += packet.sent_bytes

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        self.bytes_in_flight -= packet.sent_bytes
        self.bytes_acked += packet.sent_bytes

    def on_packets_lost(self, now: float, packets: Sequence[SentPacket]) -> None:
        for packet in packets:
            self.bytes_in_flight -= packet.sent_bytes
            self.bytes_lost += packet.sent_bytes

    def on_packets_expired(self, packets: Sequence[SentPacket]) -> None:
        """Packets dropped without a congestion signal (key discard, PTO retransmission)."""
        for packet in packets:
            self.bytes_in_flight -= packet.sent_bytes

    def on_rtt_sample(self, now: float, latest_rtt: float) -> None:  # noqa: B027 - optional
        """A new RTT sample; `rtt_stats` is already updated by the caller."""

    def on_persistent_congestion(self) -> None:  # noqa: B027 - optional hook
        """RFC 9002 persistent congestion."""

    # -- outputs --------------------------------------------------------------------------

    @property
    @abc.abstractmethod
    def congestion_window(self) -> int:
        """Bytes allowed in flight."""

    @property
    def pacing_rate(self) -> float | None:
        """Bytes per second for rate-based controllers, None for window-based ones."""
        return None

    @property
    def ssthresh(self) -> int | None:
        return None

    def paced_rate(self, smoothed_rtt: float) -> float | None:
        """The rate (bytes/s) a pacer should send at; None: do not pace (no RTT yet)."""
        rate = self.pacing_rate
        if rate is not None:
            return rate
        if smoothed_rtt <= 0:
            return None
        ssthresh = self.ssthresh
        in_slow_start = ssthresh is None or self.congestion_window < ssthresh
        gain = WINDOW_PACING_GAIN_SLOW_START if in_slow_start else WINDOW_PACING_GAIN
        return gain * self.congestion_window / smoothed_rtt

    def window_opens_at(self) -> float | None:
        """When a window that grows with time alone next has room for a packet; None when
        it has room now or only an ACK can open it. The sender wakes then, as it would for
        the pacer, instead of waiting for the next ACK."""
        return None

    def delivery_rate(self) -> float:
        """Recent delivered bytes per second (0 when unknown)."""
        return 0.0

    def log_data(self) -> dict[str, Any]:
        """Extra fields for aioquic's `recovery:metrics_updated` qlog event."""
        return {}

    def telemetry_sample(self, now: float) -> dict[str, Any]:
        """A snapshot with the same keys for every controller (rates in bit/s)."""
        srtt = self.rtt_stats.smoothed_rtt
        rate = self.paced_rate(srtt) or 0.0
        return {
            "cwnd_bytes": self.congestion_window,
            "pacing_rate_bps": rate * 8.0,
            "srtt_ms": srtt * 1000.0,
            "min_rtt_ms": self.rtt_stats.min_rtt_or(0.0) * 1000.0,
            "latest_rtt_ms": self.rtt_stats.latest_rtt * 1000.0,
            "bytes_in_flight": self.bytes_in_flight,
            "delivery_rate_bps": self.delivery_rate() * 8.0,
            "bytes_sent": self.bytes_sent,
            "bytes_lost": self.bytes_lost,
        }

    def emit(self, event: dict[str, Any]) -> None:
        if self.event_sink is not None:
            self.event_sink(event)

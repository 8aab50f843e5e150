"""Delivery-rate samples per draft-cheng-iccrg-delivery-rate-estimation-00, with app-limited
marking, for any controller that needs "how fast did the path deliver my data".

Each sent packet records the connection's delivery state (`delivered`, `delivered_time`,
`first_sent_time`, app-limited bubble) at send time; when it is acknowledged, the data
delivered since then over the longer of the send and ack intervals is a rate sample (the
longer interval, because ACK compression can shrink the ack interval and the sender's
bursts the send interval, and either alone would overestimate).

Under aioquic a controller is told about each acknowledged packet separately
(`on_packet_acked`, then once `on_rtt_sample` per ACK frame), with no "end of ACK" call, so
`BBR` treats every acked packet as its own ACK event: it calls `on_packet_acked` then
`generate`. That yields one sample per packet instead of one per ACK frame; each is a valid
sample of its own interval, the per-ACK sample (from the newest packet) is among them, and
the older ones in the same frame count a subset of the data over a longer interval, so they
can only be lower. A max filter therefore sees the same maximum.

App-limited periods. A sample taken while the sender had nothing to send measures the
application, not the path, and must not pull a max-bandwidth estimate down. The draft marks
the "bubble" when the application runs out of data: `app_limited = delivered + in flight`,
and every packet sent until that much has been delivered carries `is_app_limited`. aioquic
does not tell the congestion controller when the stream queues run dry, so `IdleDetector`
infers it at the next send: if the window had room for another packet and the pacer would
have released it, yet the sender stayed silent for more than `gap` longer than the pacer
required, it had nothing to send. The packets sent on resumption are exactly the ones whose
sample intervals span the silence, and they are the ones marked. Limits: a sender trickling
data slower than its pacing rate without ever pausing longer than `gap` is not detected;
see docs/baselines.md.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

# Silence beyond what the pacer required before the sender counts as having run out of
# data. The floor absorbs asyncio timer and scheduling jitter (a few ms on a loaded host):
# a false "app-limited" only stops samples from lowering the max (harmless for a while),
# but marking every packet would freeze the bandwidth estimate, so err on the long side.
IDLE_GAP_MIN_S = 0.010
IDLE_GAP_PACKETS = 2.0


@dataclass(slots=True)
class PacketState:
    """What a packet recorded of the connection's delivery state when it was sent."""

    delivered: int
    delivered_time: float
    first_sent_time: float
    sent_time: float
    is_app_limited: bool
    size: int


@dataclass(slots=True)
class RateSample:
    delivery_rate: float  # bytes/s
    delivered: int  # bytes delivered over the interval
    interval: float  # seconds
    is_app_limited: bool
    prior_delivered: int  # `delivered` when the sampled packet was sent (round counting)
    send_elapsed: float
    ack_elapsed: float


class DeliveryRateSampler:
    """Connection-level delivery bookkeeping (the draft's C.* and P.* variables).

    Packets are keyed by the caller (packet number, or (space, number) under QUIC, where
    each packet-number space starts from 0).
    """

    def __init__(self) -> None:
        self.delivered = 0  # C.delivered: bytes acknowledged so far
        self.delivered_time = 0.0  # C.delivered_time
        self.first_sent_time = 0.0  # C.first_sent_time
        self.app_limited = 0  # C.app_limited: end of the bubble in `delivered` units, or 0
        self._packets: dict[Hashable, PacketState] = {}
        self._bytes_in_flight = 0
        # The in-progress sample (the draft's rs), filled by on_packet_acked.
        self._rs: PacketState | None = None
        self._rs_delivered_time = 0.0

    @property
    def bytes_in_flight(self) -> int:
        """Bytes of tracked packets neither acknowledged nor lost."""
        return self._bytes_in_flight

    @property
    def is_app_limited(self) -> bool:
        return self.app_limited != 0

    def on_app_limited(self) -> None:
        """The sender has run out of data: packets sent until the data now in flight is
        delivered are marked app-limited (draft section 3.4)."""
        self.app_limited = (self.delivered + self._bytes_in_flight) or 1

    def on_packet_sent(self, now: float, key: Hashable, size: int) -> None:
        if self._bytes_in_flight == 0:
            # Nothing in flight: the sending interval starts now, and so does the
            # delivery interval (an idle period must not count as delivery time).
            self.first_sent_time = now
            self.delivered_time = now
        self._packets[key] = PacketState(
            delivered=self.delivered,
            delivered_time=self.delivered_time,
            first_sent_time=self.first_sent_time,
            sent_time=now,
            is_app_limited=self.app_limited != 0,
            size=size,
        )
        self._bytes_in_flight += size

    def on_packet_acked(self, now: float, key: Hashable) -> PacketState | None:
        """Count `key` as delivered and return its send-time state; None if it was not
        tracked (sent before this sampler existed, or already settled)."""
        p = self._packets.pop(key, None)
        if p is None:
            return None
        self._bytes_in_flight -= p.size
        self.delivered += p.size
        self.delivered_time = now
        rs = self._rs
        # The newest packet (most data delivered before it was sent) defines the sample.
        if rs is None or p.delivered > rs.delivered or (
                p.delivered == rs.delivered and p.sent_time > rs.sent_time):
            self._rs = p
            self._rs_delivered_time = now
            self.first_sent_time = p.sent_time
        return p

    def on_packet_lost(self, key: Hashable) -> None:
        """A packet declared lost or abandoned: no longer in flight, never delivered."""
        p = self._packets.pop(key, None)
        if p is not None:
            self._bytes_in_flight -= p.size

    def generate(self, min_rtt: float) -> RateSample | None:
        """The sample of the acks since the last call, or None if there is none or its
        interval is shorter than `min_rtt` (such short intervals come from ACK
        compression or bursts and overestimate the rate)."""
        # The bubble is over once the data in flight when it began has been delivered.
        if self.app_limited and self.delivered > self.app_limited:
            self.app_limited = 0
        rs, self._rs = self._rs, None
        if rs is None:
            return None
        send_elapsed = rs.sent_time - rs.first_sent_time
        ack_elapsed = self._rs_delivered_time - rs.delivered_time
        interval = max(send_elapsed, ack_elapsed)
        delivered = self.delivered - rs.delivered
        if interval <= 0 or interval < min_rtt:
            return None
        return RateSample(
            delivery_rate=delivered / interval,
            delivered=delivered,
            interval=interval,
            is_app_limited=rs.is_app_limited,
            prior_delivered=rs.delivered,
            send_elapsed=send_elapsed,
            ack_elapsed=ack_elapsed,
        )


class IdleDetector:
    """Infers "the sender ran out of data" from silences the window and pacer did not cause.

    After each send (and whenever an ACK or loss opens the window) it notes the earliest
    time the sender could have sent again: now + one pacing interval if the window has
    room, else "blocked" until an ACK makes room. A send that comes more than
    max(`IDLE_GAP_MIN_S`, `IDLE_GAP_PACKETS` pacing intervals) after that time means the
    sender had permission and nothing to send.
    """

    def __init__(self, *, min_gap: float = IDLE_GAP_MIN_S,
                 gap_packets: float = IDLE_GAP_PACKETS) -> None:
        self.min_gap = min_gap
        self.gap_packets = gap_packets
        self._allowed_at: float | None = None  # None: window-blocked (or nothing sent yet)
        self._interval = 0.0

    def before_send(self, now: float) -> bool:
        """True if the sender sat idle while allowed to send (call before each send)."""
        allowed = self._allowed_at
        if allowed is None:
            return False
        return now - allowed > max(self.min_gap, self.gap_packets * self._interval)

    def after_send(self, now: float, *, room: bool, pacing_interval: float) -> None:
        """`room`: the window allows another packet; `pacing_interval`: seconds per packet
        at the current pacing rate (0 if unpaced)."""
        self._interval = pacing_interval
        self._allowed_at = now + pacing_interval if room else None

    def on_window_change(self, now: float, *, room: bool) -> None:
        """An ACK or loss changed bytes in flight or the window."""
        if not room:
            self._allowed_at = None
        elif self._allowed_at is None:
            self._allowed_at = now

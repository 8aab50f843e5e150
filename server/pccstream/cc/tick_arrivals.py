"""Packet arrivals at the receiver, counted per tick, as a sender can know them from ACKs.

Sprout's receiver counts the packets it receives in each 20 ms tick. A QUIC sender only
sees ACK frames: a frame acknowledging packets at time `now` that reports an ACK delay `d`
says the receiver got its largest packet at about `now - d` (plus the return-path delay,
which shifts every tick alike and so does not change the counts). The delay arrives with
the frame's RTT sample, after its packets are reported acked, so the packets of one frame
wait in `_pending` until the sample (or the next event) closes it.

A tick on that clock is closed once no more of its arrivals can be reported: `lag` after
its end (the ACK delay bound). Arrivals reported later count in the tick open then.

Whether a tick's count measures the link: only if the bottleneck had something queued for
the whole tick. A packet sent at `s` and arriving at `a` (on the same clock) waited in the
queue during [s + offset, a], offset being the path outside the queue (the min RTT on the
ACK clock); the oldest packet still unacknowledged when the tick closes waited through its
end. A tick covered by those intervals is `busy`: its count is a sample of the link's
capacity. Otherwise the sender, not the link, may have limited it: the count is only a
lower bound. (Sprout's receiver skipped the ticks in which the sender said it would not
send; a window-limited QUIC sender says nothing, so the queue has to tell.)

`DeliveryClock`, when given, replaces the ACK-derived clock with true per-packet delivery
times (the link model's bottleneck departures), to measure what the ACK clock costs.
"""

from __future__ import annotations

import abc
import math
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .base import Controller, SentPacket

# A tick counts as busy when queued packets cover this share of it (packets are discrete:
# a back-to-back successor enters the queue a little after its predecessor leaves).
BUSY_COVERAGE = 0.9


@dataclass(frozen=True)
class DeliveryClock:
    """True delivery times: `arrival_time(packet)` on the link's clock, and the time from
    sending to entering the bottleneck's queue (`entry_offset_s`)."""

    arrival_time: Callable[[SentPacket], float | None]
    entry_offset_s: float = 0.0


@dataclass(frozen=True, slots=True)
class ClosedTick:
    end: float  # on the arrival clock, seconds
    bytes: int
    busy: bool  # the queue was never empty: the count measures the link


class TickArrivals:
    def __init__(self, tick_s: float, lag_s: float) -> None:
        self.tick_s = tick_s
        self.lag_s = lag_s
        self._open: int | None = None  # index of the oldest tick not yet closed
        self._bytes: dict[int, int] = {}
        self._queued: deque[tuple[float, float]] = deque()  # [start, end] a packet waited
        self._pending: list[tuple[float, int]] = []  # (sent, bytes) of the frame at _pending_time
        self._pending_time = 0.0
        self.last_ack_delay = 0.0

    def add(self, arrival: float, sent: float, size: int, entry_offset: float) -> None:
        index = math.floor(arrival / self.tick_s)
        if self._open is None:
            self._open = index
        self._bytes[max(index, self._open)] = self._bytes.get(max(index, self._open), 0) + size
        start = sent + entry_offset
        if start < arrival:
            self._queued.append((start, arrival))

    def add_acked(self, now: float, sent: float, size: int, entry_offset: float) -> None:
        """A packet acknowledged at `now`: its arrival time waits for the frame's ACK delay."""
        if self._pending and now > self._pending_time:
            self.flush(entry_offset)
        self._pending_time = now
        self._pending.append((sent, size))

    def flush(self, entry_offset: float, ack_delay: float | None = None) -> None:
        if ack_delay is not None:
            self.last_ack_delay = max(0.0, ack_delay)
        for sent, size in self._pending:
            self.add(self._pending_time - self.last_ack_delay, sent, size, entry_offset)
        self._pending = []

    def close(self, now: float, queued_since: float | None,
              entry_offset: float) -> list[ClosedTick]:
        """The ticks that can no longer receive arrivals at `now`, oldest first.
        `queued_since`: when the oldest unacknowledged packet entered the queue."""
        if self._pending and now > self._pending_time:
            self.flush(entry_offset)
        closed: list[ClosedTick] = []
        if self._open is None:
            return closed
        while (self._open + 1) * self.tick_s + self.lag_s <= now:
            start, end = self._open * self.tick_s, (self._open + 1) * self.tick_s
            size = self._bytes.pop(self._open, 0)
            intervals = list(self._queued)
            if queued_since is not None:
                intervals.append((queued_since, end))
            busy = _covered(intervals, start, end) >= BUSY_COVERAGE * self.tick_s
            closed.append(ClosedTick(end, size, busy))
            while self._queued and self._queued[0][1] < end:
                self._queued.popleft()
            self._open += 1
        return closed


def _covered(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """Length of [start, end] inside the union of `intervals`."""
    clipped = sorted((max(a, start), min(b, end)) for a, b in intervals if b > start and a < end)
    total, reach = 0.0, start
    for a, b in clipped:
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


class TickWindowParams(Protocol):
    """The parameters every tick-window controller declares (ms and packets)."""

    @property
    def tick_ms(self) -> float: ...
    @property
    def target_ms(self) -> float: ...
    @property
    def ack_delay_ms(self) -> float: ...
    @property
    def min_window(self) -> float: ...
    @property
    def initial_window(self) -> float: ...


class TickWindowController(Controller):
    """A window-based controller that decides once per closed arrival tick (the Sprout
    family): subclasses implement `on_tick`, returning the window in bytes.

    The window never falls below `min_window_packets`: with nothing in flight there would
    be no ACKs, so no ticks and no way to see capacity come back (Sprout's receiver got
    heartbeats instead).
    """

    is_rate_based = False

    def __init__(self, params: TickWindowParams, clock: DeliveryClock | None = None) -> None:
        super().__init__()
        self.tick_s = params.tick_ms / 1000
        self.target_ticks = max(1, round(params.target_ms / params.tick_ms))
        self.min_window_packets = params.min_window
        self.window_bytes = params.initial_window * self.max_datagram_size
        self._initial_window_packets = params.initial_window
        self._ack_delay_bound_s = params.ack_delay_ms / 1000
        self._ticks = TickArrivals(self.tick_s, self._ack_delay_bound_s)
        self._clock = clock
        self._unacked: OrderedDict[int, float] = OrderedDict()  # packet number -> sent time

    def bind(self, *, max_datagram_size: int, now: float | None = None) -> None:
        super().bind(max_datagram_size=max_datagram_size, now=now)
        self.window_bytes = self._initial_window_packets * max_datagram_size

    @abc.abstractmethod
    def on_tick(self, now: float, tick: ClosedTick) -> float:
        """Update the model with one tick's arrivals; the new window in bytes."""

    def pipe_ticks(self) -> int:
        """Ticks of deliveries whose ACKs are still on the way: packets past the bottleneck
        count in flight as well as those queued in it."""
        min_rtt = self.rtt_stats.min_rtt_or(0.0)
        return math.ceil(min_rtt / self.tick_s - 1e-9) if min_rtt > 0 else 0

    def horizon_s(self) -> float:
        """The time the window covers: the delay target plus the pipe (telemetry's allowed rate)."""
        return (self.target_ticks + self.pipe_ticks()) * self.tick_s

    def queue_estimate_packets(self, pipe_deliveries: float) -> float:
        """Packets in flight beyond those the pipe holds outside the queue (`pipe_deliveries`,
        the deliveries expected while an ACK comes back): the sender's view of the queue."""
        return max(0.0, len(self._unacked) - pipe_deliveries)

    def _entry_offset(self) -> float:
        if self._clock is not None:
            return self._clock.entry_offset_s
        return self.rtt_stats.min_rtt_or(0.0)

    def _advance(self, now: float) -> None:
        offset = self._entry_offset()
        if self._clock is not None:
            # True delivery times reach the sender one return path after the fact.
            self._ticks.lag_s = self._ack_delay_bound_s + self.rtt_stats.min_rtt_or(0.0)
        oldest = next(iter(self._unacked.values()), None)
        queued_since = oldest + offset if oldest is not None else None
        for tick in self._ticks.close(now, queued_since, offset):
            window = max(self.on_tick(now, tick), self.min_window_packets * self.max_datagram_size)
            if int(window) != int(self.window_bytes):
                self.pacing_version += 1
            self.window_bytes = window

    def on_packet_sent(self, now: float, packet: SentPacket) -> None:
        self._advance(now)
        super().on_packet_sent(now, packet)
        self._unacked[packet.packet_number] = now

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        super().on_packet_acked(now, packet)
        sent = self._unacked.pop(packet.packet_number, None)
        if sent is None:
            return
        if self._clock is not None:
            arrival = self._clock.arrival_time(packet)
            if arrival is not None:
                self._ticks.add(arrival, sent, packet.sent_bytes, self._entry_offset())
                return
        self._ticks.add_acked(now, sent, packet.sent_bytes, self._entry_offset())

    def on_rtt_sample(self, now: float, latest_rtt: float) -> None:
        # `rtt_stats.latest_rtt` has the ACK delay taken off already (RFC 9002 5.3).
        self._ticks.flush(self._entry_offset(), latest_rtt - self.rtt_stats.latest_rtt)
        self._advance(now)

    def _forget(self, packets: Sequence[SentPacket]) -> None:
        for packet in packets:
            self._unacked.pop(packet.packet_number, None)

    def on_packets_lost(self, now: float, packets: Sequence[SentPacket]) -> None:
        super().on_packets_lost(now, packets)
        self._forget(packets)
        self._advance(now)

    def on_packets_expired(self, packets: Sequence[SentPacket]) -> None:
        super().on_packets_expired(packets)
        self._forget(packets)

    @property
    def congestion_window(self) -> int:
        return int(self.window_bytes)

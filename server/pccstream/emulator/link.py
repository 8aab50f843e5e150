"""One direction of the emulated path: loss-free bottleneck schedule + queue, then random loss,
then the propagation delay line. Pure model: every call takes the current time `now` in ms.

Order (documented in docs/emulator.md): arrival -> queue (drop-tail/CoDel drops) -> bottleneck
departure at a delivery opportunity (mahimahi's LinkQueue semantics) -> random loss (the packet
used capacity, like a frame corrupted on the air) -> constant delay -> delivery. This equals
`mm-delay D mm-loss ... mm-link ...` up to where the loss sits.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from pccstream.emulator.log import PacketLog
from pccstream.emulator.loss import LossModel, NoLoss
from pccstream.emulator.packet import Packet
from pccstream.emulator.queues import DropTailQueue
from pccstream.emulator.trace import PACKET_SIZE, Trace

_INF = math.inf


@dataclass
class LinkStatus:
    """Side channel for dashboards: what the link looks like right now."""

    direction: str
    capacity_mbps: float | None  # None = unshaped
    queue_packets: int
    queue_bytes: int
    delay_ms: float
    loss: float


class Link:
    def __init__(
        self,
        direction: str,
        trace: Trace | None,
        queue: DropTailQueue | None = None,
        loss: LossModel | None = None,
        delay_ms: float = 0.0,
        log: PacketLog | None = None,
        start_ms: float = 0.0,
    ) -> None:
        if delay_ms < 0 or not math.isfinite(delay_ms):
            raise ValueError(f"delay {delay_ms} ms is impossible")
        self.direction = direction
        self._d = direction[0]  # 'd' / 'u' in the log
        self.queue = queue if queue is not None else DropTailQueue()
        self.loss: LossModel = loss if loss is not None else NoLoss()
        self.delay = float(delay_ms)
        self.log = log
        self._transit: Packet | None = None
        self._line: deque[tuple[float, Packet]] = deque()  # (delivery time, packet), FIFO
        self._last_delivery = -_INF
        self.trace: Trace | None = None
        self._times: tuple[int, ...] = ()
        self._counts: tuple[int, ...] = ()
        self._idx = 0
        self._base = 0
        self._next = _INF
        self._install(trace, start_ms, skip_past=False)
        # Counters (packets / bytes) for quick checks without a log.
        self.arrived = 0
        self.delivered = 0
        self.delivered_bytes = 0
        self.dropped = 0

    # -- configuration ---------------------------------------------------------------------
    def _install(self, trace: Trace | None, now: float, skip_past: bool) -> None:
        self.trace = trace
        if trace is None:
            self._next = _INF
            return
        self._times, self._counts = trace.times, trace.counts
        self._idx = 0
        self._base = math.floor(now)
        self._next = self._base + self._times[0]
        if skip_past:
            # Opportunities at or before `now` belonged to the old schedule.
            while self._next <= now:
                self._step()

    def set_trace(self, trace: Trace | None, now: float) -> None:
        """Switch schedule (e.g. a new rate) at `now`; the new one's loop starts at floor(now)."""
        self.rationalize(now)
        if trace is None and self._transit is not None:
            self._depart(self._transit, now)
            self._transit = None
        self._install(trace, now, skip_past=True)
        if trace is None:
            while self.queue:
                pkt = self.queue.dequeue(now)
                if pkt is None:
                    break
                self._depart(pkt, now)
        if self.log is not None:
            desc = "unshaped" if trace is None else f"{trace.average_bps() / 1e6:.6g}mbit"
            self.log.setting(self._d, now, f"rate={desc}")

    def set_delay(self, delay_ms: float, now: float) -> None:
        if delay_ms < 0 or not math.isfinite(delay_ms):
            raise ValueError(f"delay {delay_ms} ms is impossible")
        self.rationalize(now)
        self.delay = float(delay_ms)
        if self.log is not None:
            self.log.setting(self._d, now, f"delay_ms={delay_ms:g}")

    def set_loss(self, loss: LossModel, now: float) -> None:
        self.rationalize(now)
        self.loss = loss
        if self.log is not None:
            self.log.setting(self._d, now, f"loss={loss.describe()}")

    # -- data path ---------------------------------------------------------------------------
    def enqueue(self, pkt: Packet, now: float) -> None:
        """A packet arrives at `now`. Like mahimahi, the schedule is first brought up to `now`,
        so an opportunity at exactly `now` is not available to this packet."""
        self.arrived += 1
        if self.trace is not None:
            # Before the arrival is logged, as mm-link does: the log stays in time order.
            self.rationalize(now)
        log = self.log
        if log is not None:
            log.arrival(self._d, now, pkt.size)
        if self.trace is None:
            self._depart(pkt, now)  # unshaped: no bottleneck
            return
        pkt.arrival = now
        if not self.queue.enqueue(pkt, now):
            self.dropped += 1
            if log is not None:
                log.drop(self._d, now, pkt.size, "queue")

    def rationalize(self, now: float) -> None:
        """Use every delivery opportunity with time <= now (mahimahi's rationalize)."""
        queue = self.queue
        log = self.log
        period = self._times[-1] if self._times else 0
        while self._next <= now:
            if (
                log is None
                and self._transit is None
                and now - self._next >= period
                and not queue
            ):
                # Idle and unlogged: skip whole loops of the schedule arithmetically.
                loops = int((now - self._next) // period)
                self._base += loops * period
                self._next += loops * period
                continue
            t = self._next
            budget = self._counts[self._idx] * PACKET_SIZE
            if log is not None:
                log.capacity(self._d, t, budget)
            while budget > 0:
                pkt = self._transit
                if pkt is None:
                    pkt = queue.dequeue(t)
                    if queue.drops:
                        self._aqm_drops(t)
                    if pkt is None:
                        break  # unused bytes of this opportunity are wasted, as in mahimahi
                    self._transit = pkt
                if pkt.left > budget:
                    pkt.left -= budget  # the rest of the packet carries over
                    break
                budget -= pkt.left  # surplus serves the next queued packet
                pkt.left = 0
                self._transit = None
                self._depart(pkt, t)
            self._step()

    def _step(self) -> None:
        self._idx += 1
        if self._idx == len(self._times):
            self._idx = 0
            self._base += self._times[-1]
        self._next = self._base + self._times[self._idx]

    def _aqm_drops(self, t: float) -> None:
        for pkt in self.queue.drops:
            self.dropped += 1
            if self.log is not None:
                self.log.drop(self._d, t, pkt.size, "codel")
        self.queue.drops.clear()

    def _depart(self, pkt: Packet, t: float) -> None:
        if self.loss.lose():
            self.dropped += 1
            if self.log is not None:
                self.log.drop(self._d, t, pkt.size, "loss", pkt.arrival)
            return
        due = t + self.delay
        # A delay decrease must not reorder packets already on the wire.
        if due < self._last_delivery:
            due = self._last_delivery
        self._last_delivery = due
        self._line.append((due, pkt))
        if self.log is not None:
            self.log.departure(self._d, t, pkt.size, t - pkt.arrival, due - pkt.arrival)

    def pop_ready(self, now: float) -> list[Packet]:
        """Bring the link to `now` and return packets whose delivery time is <= now."""
        if self._next <= now:
            self.rationalize(now)
        line = self._line
        if not line or line[0][0] > now:
            return []
        out: list[Packet] = []
        while line and line[0][0] <= now:
            out.append(line.popleft()[1])
        self.delivered += len(out)
        for p in out:
            self.delivered_bytes += p.size
        return out

    def next_event(self) -> float:
        """Earliest time something must happen (a delivery, or an opportunity with work to do);
        inf if nothing is pending. Idle opportunities need no wake-up: they are accounted for
        lazily by the next rationalize()."""
        t = self._line[0][0] if self._line else _INF
        if (self._transit is not None or self.queue) and self._next < t:
            t = self._next
        return t

    def status(self, now: float) -> LinkStatus:
        """Current capacity (schedule averaged over the last second), queue and settings."""
        self.rationalize(now)
        cap: float | None = None
        if self.trace is not None:
            rel = now - self._base
            n = self.trace.count_upto(rel) - self.trace.count_upto(rel - 1000)
            cap = n * PACKET_SIZE * 8 / 1000 / 1000  # per 1000 ms -> Mbit/s
        return LinkStatus(
            self.direction,
            cap,
            len(self.queue) + (1 if self._transit is not None else 0),
            self.queue.bytes + (self._transit.left if self._transit is not None else 0),
            self.delay,
            self.loss.mean,
        )

    def backlog(self) -> int:
        """Packets queued, in transmission or in the delay line."""
        return len(self.queue) + (self._transit is not None) + len(self._line)

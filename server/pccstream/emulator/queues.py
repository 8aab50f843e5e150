"""Bottleneck queues: drop-tail (packets and/or bytes, or unlimited = mahimahi's infinite) and
CoDel. Sizes count the packet's wire size, as the link does."""

from __future__ import annotations

import math
import re
from collections import deque

from pccstream.emulator.packet import Packet
from pccstream.emulator.trace import PACKET_SIZE
from pccstream.errors import UserError


class DropTailQueue:
    """FIFO that refuses an arriving packet if it would exceed either limit (mahimahi's
    DropTailPacketQueue). The packet being transmitted no longer counts: it left the queue."""

    kind = "droptail"

    def __init__(self, max_packets: int | None = None, max_bytes: int | None = None) -> None:
        if max_packets is not None and max_packets <= 0:
            raise UserError(f"queue limit of {max_packets} packets is impossible: must be > 0")
        if max_bytes is not None and max_bytes <= 0:
            raise UserError(f"queue limit of {max_bytes} bytes is impossible: must be > 0")
        self.max_packets = max_packets
        self.max_bytes = max_bytes
        self._q: deque[Packet] = deque()
        self.bytes = 0
        # Packets an AQM discarded during the last dequeue; the link logs and clears them.
        self.drops: list[Packet] = []

    def __len__(self) -> int:
        return len(self._q)

    def enqueue(self, pkt: Packet, now: float) -> bool:
        if (self.max_packets is not None and len(self._q) + 1 > self.max_packets) or (
            self.max_bytes is not None and self.bytes + pkt.size > self.max_bytes
        ):
            return False
        self._q.append(pkt)
        self.bytes += pkt.size
        return True

    def _pop(self) -> Packet | None:
        if not self._q:
            return None
        pkt = self._q.popleft()
        self.bytes -= pkt.size
        return pkt

    def dequeue(self, now: float) -> Packet | None:
        return self._pop()

    def describe(self) -> str:
        if self.max_packets is None and self.max_bytes is None:
            return "infinite"
        parts = []
        if self.max_packets is not None:
            parts.append(f"{self.max_packets}pkts")
        if self.max_bytes is not None:
            parts.append(f"{self.max_bytes}B")
        return "droptail:" + ",".join(parts)


class CoDelQueue(DropTailQueue):
    """CoDel (RFC 8289) deciding at dequeue; times in ms. Like mahimahi's codel queue it never
    drops while at most one MTU (1504 B) is queued, and it can also have drop-tail limits."""

    kind = "codel"

    def __init__(
        self,
        target_ms: float = 5.0,
        interval_ms: float = 100.0,
        max_packets: int | None = None,
        max_bytes: int | None = None,
    ) -> None:
        super().__init__(max_packets, max_bytes)
        if target_ms <= 0 or interval_ms <= 0:
            raise UserError("codel target and interval must be positive milliseconds")
        self.target = target_ms
        self.interval = interval_ms
        self._first_above: float | None = None
        self._drop_next = 0.0
        self._count = 0
        self._last_count = 0
        self._dropping = False

    def _control_law(self, t: float, count: int) -> float:
        return t + self.interval / math.sqrt(count)

    def _do_dequeue(self, now: float) -> tuple[Packet | None, bool]:
        pkt = self._pop()
        if pkt is None:
            self._first_above = None
            return None, False
        if now - pkt.arrival < self.target or self.bytes <= PACKET_SIZE:
            self._first_above = None
            return pkt, False
        if self._first_above is None:
            self._first_above = now + self.interval
            return pkt, False
        return pkt, now >= self._first_above

    def dequeue(self, now: float) -> Packet | None:
        pkt, ok_to_drop = self._do_dequeue(now)
        if pkt is None:
            self._dropping = False
            return None
        if self._dropping:
            if not ok_to_drop:
                self._dropping = False
            while self._dropping and now >= self._drop_next:
                self.drops.append(pkt)
                self._count += 1
                pkt, ok_to_drop = self._do_dequeue(now)
                if pkt is None:
                    self._dropping = False
                    return None
                if not ok_to_drop:
                    self._dropping = False
                else:
                    self._drop_next = self._control_law(self._drop_next, self._count)
        elif ok_to_drop:
            self.drops.append(pkt)
            pkt, _ = self._do_dequeue(now)
            self._dropping = True
            delta = self._count - self._last_count
            recent = now - self._drop_next < 16 * self.interval
            self._count = delta if delta > 1 and recent else 1
            self._drop_next = self._control_law(now, self._count)
            self._last_count = self._count
        return pkt

    def describe(self) -> str:
        return f"codel:target={self.target:g},interval={self.interval:g}"


Queue = DropTailQueue

_SIZE_RE = re.compile(r"^([0-9]*\.?[0-9]+)\s*(pkts|pkt|packets|p|kb|b|mb)$", re.IGNORECASE)


def parse_queue(spec: str, where: str = "queue") -> DropTailQueue:
    """'infinite', '30pkts', '45kB', '1200B', 'codel', 'codel:target=5,interval=100,pkts=1000'.

    kB/MB are decimal (1 kB = 1000 B), matching mahimahi's `bytes=` arguments."""
    s = spec.strip()
    low = s.lower()
    if low in ("infinite", "inf", "unlimited"):
        return DropTailQueue()
    if low.startswith("codel"):
        opts: dict[str, float] = {}
        limits: list[DropTailQueue] = []
        rest = s[5:].lstrip(":")
        for item in filter(None, (x.strip() for x in rest.split(","))):
            key, eq, val = item.partition("=")
            key = key.strip().lower()
            if not eq:
                # A bare size such as 'codel:1000pkts' is a drop-tail limit.
                limits.append(_size_queue(item, where))
                continue
            if key in ("target", "interval"):
                try:
                    opts[key] = float(val)
                except ValueError:
                    raise UserError(f"{where}: codel {key}={val!r} is not a number") from None
            elif key in ("pkts", "packets", "bytes", "limit"):
                unit = "pkts" if key in ("pkts", "packets") else ("B" if key == "bytes" else "")
                limits.append(_size_queue(val.strip() + unit, where))
            else:
                raise UserError(
                    f"{where}: unknown codel option {key!r} (target, interval, pkts, bytes)"
                )
        max_p = next((q.max_packets for q in limits if q.max_packets is not None), None)
        max_b = next((q.max_bytes for q in limits if q.max_bytes is not None), None)
        return CoDelQueue(opts.get("target", 5.0), opts.get("interval", 100.0), max_p, max_b)
    return _size_queue(s, where)


def _size_queue(s: str, where: str) -> DropTailQueue:
    m = _SIZE_RE.match(s.strip())
    if not m:
        raise UserError(
            f"{where}: cannot parse queue {s!r} (expected infinite, N pkts, N kB, N B or codel)"
        )
    value = float(m.group(1))
    unit = m.group(2).lower()
    if unit in ("pkts", "pkt", "packets", "p"):
        if value != int(value) or value < 1:
            raise UserError(f"{where}: queue of {s!r} is impossible: need a whole number >= 1")
        return DropTailQueue(max_packets=int(value))
    nbytes = value * {"b": 1, "kb": 1000, "mb": 1_000_000}[unit]
    if nbytes < 1:
        raise UserError(f"{where}: queue of {s!r} is impossible: must hold at least one byte")
    return DropTailQueue(max_bytes=int(nbytes))

"""How late the emulator's timers fire: its own timing error, and a window on the host.

The emulator runs at real-time priority and sleeps until the model's next event, so a timer
that fires late means either that the whole machine did not run (a virtual machine whose CPU
the hypervisor descheduled, which no load average shows) or that the emulator itself was
still busy. A host stall holds every process: the sender then catches up in a burst that
queues at the bottleneck, and latency figures carry the host's share. The log records the
summary, and every run keeps it beside its link metrics.
"""

from __future__ import annotations

import json
import math
from typing import Any

# Histogram bins of 0.1 ms up to this many ms (one more bin holds anything later).
_BIN_MS = 0.1
_MAX_MS = 100.0
# Lateness below this is the event loop's own (select() and Python); above it, a stall.
STALL_MS = 1.0
HEADER_KEY = "timer_lateness"


class TimerLateness:
    """A running summary of timer lateness (ms) over a wall-clock span."""

    def __init__(self) -> None:
        self._bins = [0] * (int(_MAX_MS / _BIN_MS) + 1)
        self.wakes = 0
        self.max_ms = 0.0
        # Time covered by the late spells of wakes later than STALL_MS, each spell counted
        # once: two timers held by one stall both fire late at its end.
        self.stalled_ms = 0.0
        self._stalled_until = -math.inf
        self.stalls = {1: 0, 5: 0, 10: 0}  # wakes later than each, ms (none below STALL_MS)

    def observe(self, late_ms: float, now_ms: float) -> None:
        """A timer due `late_ms` before `now_ms` fired at `now_ms`."""
        late_ms = max(0.0, late_ms)
        self.wakes += 1
        self._bins[min(len(self._bins) - 1, int(late_ms / _BIN_MS))] += 1
        self.max_ms = max(self.max_ms, late_ms)
        if late_ms <= STALL_MS:
            return  # nearly every wake: none of the stall counts below applies
        start = max(now_ms - late_ms, self._stalled_until)
        self.stalled_ms += max(0.0, now_ms - start)
        self._stalled_until = max(self._stalled_until, now_ms)
        for threshold in self.stalls:
            if late_ms > threshold:
                self.stalls[threshold] += 1

    def percentile(self, q: float) -> float:
        """The q-th percentile, to the bin's upper edge (0 with no wakes)."""
        if self.wakes == 0:
            return 0.0
        rank, seen = q / 100 * self.wakes, 0
        for i, count in enumerate(self._bins):
            seen += count
            if seen >= rank:
                return round((i + 1) * _BIN_MS, 1)
        return self.max_ms

    def summary(self, span_ms: float) -> dict[str, Any]:
        return {
            "wakes": self.wakes,
            "p99_ms": self.percentile(99),
            "max_ms": round(self.max_ms, 3),
            **{f"over_{t}ms": n for t, n in self.stalls.items()},
            "stalled_share": round(self.stalled_ms / span_ms, 5) if span_ms > 0 else None,
        }


def parse_summary(header: dict[str, str]) -> dict[str, Any] | None:
    """The summary an emulator log's header holds (None: an older log without one)."""
    text = header.get(HEADER_KEY)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None

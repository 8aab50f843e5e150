"""`sprout-ewma`: the simpler variant of Sprout's paper (and the contest write-up's start):
the delivery rate as an EWMA of each tick's arrivals, assumed to stay where it is, and a
window of what that rate delivers within the target delay (plus the min RTT's worth past
the bottleneck, as for `sprout`). Ticks in which the queue may have run empty only count
when they show more than the estimate. No forecast, no caution: it follows the link more
closely and overshoots into outages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .params import param
from .tick_arrivals import ClosedTick, DeliveryClock, TickWindowController


@dataclass(frozen=True)
class SproutEwmaParams:
    tick_ms: float = param(20.0, "rate sampling tick (ms)", lo=5.0, hi=200.0)
    target_ms: float = param(100.0, "queueing delay to stay within (ms)", lo=10.0, hi=2000.0)
    weight: float = param(0.125, "EWMA weight of each tick", lo=0.001, hi=1.0)
    ack_delay_ms: float = param(25.0, "bound on the peer's ACK delay (ms)", lo=0.0, hi=1000.0)
    min_window: float = param(1.0, "window floor (packets)", lo=1.0, hi=1000.0)
    initial_window: float = param(10.0, "window until the first tick (packets)", lo=1.0,
                                  hi=1000.0)


class SproutEwma(TickWindowController):
    name = "sprout-ewma"

    def __init__(self, params: SproutEwmaParams | None = None, *,
                 clock: DeliveryClock | None = None) -> None:
        self.params = params or SproutEwmaParams()
        super().__init__(self.params, clock)
        self.rate_bytes_per_tick: float | None = None

    def on_tick(self, now: float, tick: ClosedTick) -> float:
        # A tick the sender may have limited only counts when it shows more than expected.
        if tick.busy or tick.bytes > (self.rate_bytes_per_tick or 0.0):
            if self.rate_bytes_per_tick is None:
                self.rate_bytes_per_tick = float(tick.bytes)
            else:
                self.rate_bytes_per_tick += self.params.weight * (
                    tick.bytes - self.rate_bytes_per_tick)
        rate = self.rate_bytes_per_tick or 0.0
        pipe = self.pipe_ticks()
        window = rate * (self.target_ticks + pipe)
        if self.t0 is not None:
            mss = self.max_datagram_size
            allowed = max(window, self.min_window_packets * mss)
            self.emit({"type": "sprout", "t_ms": (now - self.t0) * 1000,
                       "tick_end_ms": (tick.end - self.t0) * 1000,
                       "arrived_packets": tick.bytes / mss,
                       "rate_mean_pps": round(rate / self.tick_s / mss, 1),
                       "window_bytes": allowed,
                       "allowed_rate_bps": allowed * 8 / self.horizon_s(),
                       "queue_estimate_packets": self.queue_estimate_packets(
                           rate * pipe / mss)})
        return window

    def log_data(self) -> dict[str, Any]:
        return {"rate_bytes_per_tick": round(self.rate_bytes_per_tick or 0.0)}

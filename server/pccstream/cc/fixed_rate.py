"""`fixed-rate`: one constant pacing rate, whatever the path does. A reference point, not a
contender: on a link of known capacity it shows what the host, the pacer and the emulator
alone add to the RTT and the queue at a chosen load, the floor under any controller's
latency there (issue 4's 1-BDP target is judged against it on a jittery host).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Controller
from .pacing import PacerParams
from .params import param
from .utility import MBIT


@dataclass(frozen=True)
class FixedRateParams(PacerParams):
    rate_mbps: float = param(10.0, "the pacing rate, Mbit/s", lo=0.01, hi=100_000.0)
    window_rtts: float = param(
        2.0, "the window caps what is in flight at this many smoothed RTTs at the rate, so a "
        "rate above capacity builds a bounded queue, not an unbounded one", lo=1.0, hi=100.0)
    min_window_packets: int = param(4, "the window's floor, in packets", lo=1, hi=1000)


class FixedRate(Controller):
    name = "fixed-rate"
    is_rate_based = True
    state = "fixed"  # the dashboard's state timeline: one state, all along

    def __init__(self, params: FixedRateParams | None = None) -> None:
        super().__init__()
        self.params = params or FixedRateParams()
        self.params.configure_pacer(self)
        self._rate = self.params.rate_mbps * MBIT / 8

    @property
    def pacing_rate(self) -> float:
        return self._rate

    @property
    def congestion_window(self) -> int:
        p = self.params
        window = p.window_rtts * self._rate * self.rtt_stats.srtt_or_initial()
        return max(int(window), p.min_window_packets * self.max_datagram_size)

    def log_data(self) -> dict[str, float]:
        return {"rate_bps": round(self._rate * 8)}

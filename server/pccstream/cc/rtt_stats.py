"""RTT estimator shared by all controllers (cf. quiche's rtt_stats.h).

Under aioquic the recovery module computes the estimates (it knows the ACK delay) and the
adapter copies them in with `set`; the simulator feeds raw samples through `update`, which
follows the same RFC 9002 section 5 rules.
"""

from __future__ import annotations

import math

MIN_RTT_FLOOR = 0.001  # aioquic never reports an RTT below 1 ms


class RttStats:
    def __init__(self, initial_rtt: float = 0.1) -> None:
        self.initial_rtt = initial_rtt
        self.latest_rtt = 0.0
        self.smoothed_rtt = 0.0
        self.rtt_variance = 0.0
        self.min_rtt = math.inf

    @property
    def has_sample(self) -> bool:
        return self.smoothed_rtt > 0.0

    def srtt_or_initial(self) -> float:
        return self.smoothed_rtt if self.smoothed_rtt > 0.0 else self.initial_rtt

    def min_rtt_or(self, default: float) -> float:
        return self.min_rtt if math.isfinite(self.min_rtt) else default

    def update(self, latest_rtt: float, ack_delay: float = 0.0) -> None:
        """Fold in one raw sample (RFC 9002 section 5.3)."""
        rtt = max(latest_rtt, MIN_RTT_FLOOR)
        self.min_rtt = min(self.min_rtt, rtt)
        if rtt > self.min_rtt + ack_delay:
            rtt -= ack_delay
        self.latest_rtt = rtt
        if self.smoothed_rtt == 0.0:
            self.smoothed_rtt = rtt
            self.rtt_variance = rtt / 2
        else:
            self.rtt_variance = 0.75 * self.rtt_variance + 0.25 * abs(self.smoothed_rtt - rtt)
            self.smoothed_rtt = 0.875 * self.smoothed_rtt + 0.125 * rtt

    def set(self, *, latest: float, smoothed: float, variance: float, minimum: float) -> None:
        """Copy estimates computed elsewhere (aioquic's recovery)."""
        self.latest_rtt = latest
        self.smoothed_rtt = smoothed
        self.rtt_variance = variance
        self.min_rtt = minimum

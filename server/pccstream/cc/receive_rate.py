"""The rate at which the receiver is taking data, from the spacing of ACK arrivals.

QUIC acknowledges several packets per ACK frame (aioquic reports them one by one with the
same timestamp), so the packets acknowledged at one instant are grouped, and each group gives
(bytes, time since the previous group). Bytes and intervals are averaged separately (EWMA
with `weight`) and divided, so a few back-to-back ACKs (tiny intervals) cannot blow the
estimate up as an average of per-ACK rates would. A group is counted once the next ACK time
shows it is complete.

With `outage_gap` > 0, a gap between two groups longer than that many average intervals
(and than `min_gap`) that ends in a clump of at least that many average groups' bytes is an
uplink outage, not a rate: a cellular uplink can hold every ACK for seconds and then release
them at once, and a 4 s interval in the average would put the estimate at a few per cent of
the capacity for dozens of groups after the ACKs resume. After a downlink outage the ACKs
resume at the link's new pace, in ordinary groups, and that gap does count: the capacity
that returns may be lower.

`aggregation` is BBR's "extra acked" (Cardwell et al., BBR v1 in Linux, bbr_update_ack_aggregation):
how many bytes the ACKs brought beyond what the rate predicts since the ACK clock last ran
no faster than the rate, at its largest within `aggregation_window` seconds. A shaped
cellular uplink releases ACKs in clumps; between clumps the sender hears nothing, and a
window without that allowance sits idle until the next clump.
"""

from __future__ import annotations

import operator

from .windowed_filter import WindowedFilter

AGGREGATION_RATE_TOLERANCE = 1.25


class ReceiveRate:
    def __init__(self, weight: float = 0.125, *, outage_gap: float = 0.0) -> None:
        self.weight = weight
        self.outage_gap = outage_gap
        self.min_gap = 0.0  # seconds; the owner keeps it at the path's min RTT
        self.outages = 0
        self._aggregation = WindowedFilter(1.0, operator.gt, 0.0)
        self._epoch_start: float | None = None
        self._epoch_bytes = 0.0
        self._group_time: float | None = None  # timestamp of the ACK group being summed
        self._group_bytes = 0
        self._prev_group_time: float | None = None
        self._ewma_bytes: float | None = None
        self._ewma_interval = 0.0

    @property
    def rate(self) -> float:
        """Bytes per second (0 before the first sample)."""
        if self._ewma_bytes is None or self._ewma_interval <= 0:
            return 0.0
        return self._ewma_bytes / self._ewma_interval

    @property
    def aggregation(self) -> float:
        """Bytes: the largest recent ACK clump beyond the rate (0 before any)."""
        return self._aggregation.best()

    @property
    def aggregation_window(self) -> float:
        return self._aggregation.window

    @aggregation_window.setter
    def aggregation_window(self, seconds: float) -> None:
        self._aggregation.window = seconds

    def on_acked(self, now: float, size: int) -> bool:
        """Count `size` bytes acknowledged at `now`; True when a group closed (new rate)."""
        closed = False
        if self._group_time is not None and now > self._group_time:
            closed = self._close_group()
        if self._group_time is None or now > self._group_time:
            self._group_time = now
            self._group_bytes = 0
        self._group_bytes += size
        return closed

    def _close_group(self) -> bool:
        assert self._group_time is not None
        updated = False
        if self._prev_group_time is not None:
            interval = self._group_time - self._prev_group_time
            w = self.weight
            if (self.outage_gap > 0 and self._ewma_bytes is not None
                    and interval > max(self.outage_gap * self._ewma_interval, self.min_gap)
                    and self._group_bytes >= self.outage_gap * self._ewma_bytes):
                self.outages += 1
            elif self._ewma_bytes is None:
                self._ewma_bytes, self._ewma_interval = float(self._group_bytes), interval
            else:
                self._ewma_bytes = (1 - w) * self._ewma_bytes + w * self._group_bytes
                self._ewma_interval = (1 - w) * self._ewma_interval + w * interval
            updated = True
        self._prev_group_time = self._group_time
        self._update_aggregation(self._group_time, self._group_bytes)
        return updated

    def _update_aggregation(self, time: float, size: int) -> None:
        # BBR measures against its max-filtered bandwidth, which errs high; an average errs
        # both ways, and ACKs running 1 % ahead of it would grow one endless epoch.
        rate = AGGREGATION_RATE_TOLERANCE * self.rate
        if rate <= 0:
            return
        if self._epoch_start is None:
            self._epoch_start, self._epoch_bytes = time, 0.0
        expected = rate * (time - self._epoch_start)
        if self._epoch_bytes <= expected:
            # The ACKs have not run ahead of the rate: a new aggregation epoch starts here.
            self._epoch_start, self._epoch_bytes = time, 0.0
            expected = 0.0
        self._epoch_bytes += size
        self._aggregation.update(max(0.0, self._epoch_bytes - expected), time)

"""The rate at which the receiver is taking data, from the spacing of ACK arrivals.

QUIC acknowledges several packets per ACK frame (aioquic reports them one by one with the
same timestamp), so the packets acknowledged at one instant are grouped, and each group gives
(bytes, time since the previous group). Bytes and intervals are averaged separately (EWMA
with `weight`) and divided, so a few back-to-back ACKs (tiny intervals) cannot blow the
estimate up as an average of per-ACK rates would. A group is counted once the next ACK time
shows it is complete.
"""

from __future__ import annotations


class ReceiveRate:
    def __init__(self, weight: float = 0.125) -> None:
        self.weight = weight
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
            if self._ewma_bytes is None:
                self._ewma_bytes, self._ewma_interval = float(self._group_bytes), interval
            else:
                self._ewma_bytes = (1 - w) * self._ewma_bytes + w * self._group_bytes
                self._ewma_interval = (1 - w) * self._ewma_interval + w * interval
            updated = True
        self._prev_group_time = self._group_time
        return updated

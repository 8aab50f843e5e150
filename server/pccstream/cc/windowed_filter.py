"""Windowed max / min filters (Kathleen Nichols' algorithm, as used by BBR).

The filter answers "the best sample seen within the last `window` time units" in O(1)
memory by keeping the best, second-best and third-best samples of successively later
sub-windows, instead of storing every sample. "Time" is whatever the caller counts in:
BBR's bandwidth filter runs on round-trip counts, its min-RTT filter on seconds.

The estimate is exact for the best sample while it is inside the window; once it ages
out, the second-best (a sample from the later part of the window) takes over, so the
answer is always a sample no older than `window` (up to the quarter/half-window
refreshes the algorithm makes to keep the runners-up spread across the window).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True)
class _Entry:
    sample: float
    time: float


class WindowedFilter:
    """Best sample over a sliding window; `better(a, b)` is True when `a` beats `b`."""

    def __init__(self, window: float, better: Callable[[float, float], bool],
                 zero: float) -> None:
        self.window = window
        self._better = better
        self._zero = zero
        self._est = [_Entry(zero, 0.0), _Entry(zero, 0.0), _Entry(zero, 0.0)]
        self._empty = True

    @property
    def empty(self) -> bool:
        return self._empty

    def best(self) -> float:
        """The best sample within the window (`zero` before the first update)."""
        return self._est[0].sample

    def second_best(self) -> float:
        return self._est[1].sample

    def third_best(self) -> float:
        return self._est[2].sample

    def reset(self, sample: float, time: float) -> None:
        """Forget everything: `sample` becomes the best, second and third."""
        self._empty = False
        for entry in self._est:
            entry.sample, entry.time = sample, time

    def update(self, sample: float, time: float) -> None:
        est = self._est
        # A new overall best, an empty filter or an expired window restarts from scratch:
        # older samples can never win again.
        if (self._empty or not self._better(est[0].sample, sample)
                or time - est[2].time > self.window):
            self.reset(sample, time)
            return
        if not self._better(est[1].sample, sample):
            est[1].sample, est[1].time = sample, time
            est[2].sample, est[2].time = sample, time
        elif not self._better(est[2].sample, sample):
            est[2].sample, est[2].time = sample, time

        # Age out the best; the runners-up move up.
        dt = time - est[0].time
        if dt > self.window:
            est[0].sample, est[0].time = est[1].sample, est[1].time
            est[1].sample, est[1].time = est[2].sample, est[2].time
            est[2].sample, est[2].time = sample, time
            if time - est[0].time > self.window:
                est[0].sample, est[0].time = est[1].sample, est[1].time
                est[1].sample, est[1].time = est[2].sample, est[2].time
            return
        # A runner-up still sharing the best's timestamp after a quarter (second) or half
        # (third) of the window is replaced by the newest sample: otherwise, when the best
        # expires, nothing from the later part of the window would be there to succeed it.
        if est[1].time == est[0].time and dt > self.window / 4:
            est[1].sample, est[1].time = sample, time
            est[2].sample, est[2].time = sample, time
        elif est[2].time == est[1].time and dt > self.window / 2:
            est[2].sample, est[2].time = sample, time


class MaxFilter(WindowedFilter):
    """Largest sample over the window (BBR's bottleneck-bandwidth estimate)."""

    def __init__(self, window: float) -> None:
        super().__init__(window, lambda a, b: a > b, 0.0)


class MinFilter(WindowedFilter):
    """Smallest sample over the window (e.g. a windowed min RTT)."""

    def __init__(self, window: float) -> None:
        super().__init__(window, lambda a, b: a < b, float("inf"))

"""Descriptive statistics shared by the benchmarks, the emulator's analysis and the reports.

Two percentile definitions are in use on purpose, each named for where it comes from:
`percentile` interpolates linearly between order statistics (numpy's default), and
`percentile95_mahimahi` picks the element at index floor(0.95 n), as mahimahi's
mm-delay-graph does, so the emulator's delay figures compare with mahimahi's.
(cc/sim.py keeps its own nearest-rank percentile for the link model's reports.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def percentile(values: Sequence[float] | np.ndarray, q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100); None for no values. Arrays (the
    emulator's per-packet figures) go through numpy, which defines it the same way."""
    if len(values) == 0:
        return None
    if isinstance(values, np.ndarray):
        return float(np.percentile(values, q))
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return percentile(present, 50.0)


def percentile95_mahimahi(values: np.ndarray) -> float:
    """mahimahi's 95th percentile: the element at index floor(0.95 n) of the sorted values."""
    s = np.sort(values)
    return float(s[min(int(0.95 * len(s)), len(s) - 1)])


def jain_index(rates: Sequence[float]) -> float | None:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 is perfectly fair, 1/n is one flow taking all."""
    if not rates:
        return None
    squares = sum(r * r for r in rates)
    if squares == 0:
        return None
    return sum(rates) ** 2 / (len(rates) * squares)


def signal_delays(arrival: np.ndarray, departure: np.ndarray) -> np.ndarray:
    """Per-millisecond signal delay: for each ms t from the first to the last arrival, the least
    (departure - t') over packets arriving at t' >= t, measured from the start of ms t as
    mm-throughput-graph does for ms-resolution logs."""
    if len(arrival) == 0:
        return np.zeros(0)
    ms = np.floor(arrival).astype(np.int64)
    lo = int(ms.min())
    n = int(ms.max()) - lo + 1
    own = np.full(n, np.inf)
    np.minimum.at(own, ms - lo, departure - ms)
    # Backward scan: sd[t] = min(own[t], sd[t+1] + 1); as a reversed running minimum of
    # own[t] + t, minus t.
    idx = np.arange(n, dtype=np.float64)
    shifted = own + idx
    run = np.minimum.accumulate(shifted[::-1])[::-1]
    return run - idx

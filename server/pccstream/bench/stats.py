"""Summary statistics used by the benchmarks (pure functions, unit-tested)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return percentile(present, 50.0)


def jain_index(rates: Sequence[float]) -> float | None:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 is perfectly fair, 1/n is one flow taking all."""
    if not rates:
        return None
    squares = sum(r * r for r in rates)
    if squares == 0:
        return None
    return sum(rates) ** 2 / (len(rates) * squares)


def convergence_time(
    series: Sequence[float],
    bin_s: float,
    fair_share: float,
    *,
    band: float = 0.25,
    hold_s: float = 5.0,
) -> float | None:
    """Thesis §4.5.2: the first time after which the flow stays within ±band of its fair share
    for `hold_s` seconds. `series` is the flow's throughput per bin; None if it never does."""
    if fair_share <= 0:
        return None
    need = max(1, round(hold_s / bin_s))
    low, high = fair_share * (1 - band), fair_share * (1 + band)
    run = 0
    for index, value in enumerate(series):
        run = run + 1 if low <= value <= high else 0
        if run >= need:
            return (index + 1 - need) * bin_s
    return None

"""Benchmark-specific statistics (pure functions, unit-tested); the general ones are in
`pccstream.stats`."""

from __future__ import annotations

from collections.abc import Sequence


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

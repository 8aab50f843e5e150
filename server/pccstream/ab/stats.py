"""Statistics for A/B results: pure functions on plain lists, seeded, tested on known data.

- `bootstrap_ci`: percentile bootstrap CI of a statistic (default: the mean).
- `paired_difference`: per-block differences arm − baseline (the blocks share one network
  realization), their mean with a bootstrap CI, and the relative change of the means with a
  CI from resampling the blocks (the same resample for both arms, so pairing is kept).
- `ecdf`, `covariance_ellipse`: for the CDF and throughput-vs-delay figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20240601


@dataclass(frozen=True)
class Estimate:
    value: float | None
    low: float | None
    high: float | None
    n: int

    def format(self, scale: float = 1.0, digits: int = 3) -> str:
        if self.value is None:
            return "n/a"
        text = f"{_sig(self.value * scale, digits)}"
        if self.low is not None and self.high is not None and self.n > 1:
            text += f" [{_sig(self.low * scale, digits)}, {_sig(self.high * scale, digits)}]"
        return text


def _sig(value: float, digits: int) -> str:
    if abs(value) < 1e-9:  # floating-point noise of a difference of equal values
        value = 0.0
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def _clean(values: Sequence[float | None]) -> np.ndarray:
    return np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)


def bootstrap_ci(
    values: Sequence[float | None],
    *,
    statistic: Callable[[np.ndarray], np.ndarray] | None = None,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Estimate:
    """Percentile bootstrap. `statistic` maps an (resamples, n) array to (resamples,) — the row
    mean by default. None/NaN values are dropped. One value: a CI of zero width is not
    claimed (low = high = None)."""
    data = _clean(values)
    n = len(data)
    if n == 0:
        return Estimate(None, None, None, 0)
    stat = statistic or (lambda a: a.mean(axis=-1))
    point = float(stat(data[np.newaxis, :])[0])
    if n == 1:
        return Estimate(point, None, None, 1)
    rng = np.random.default_rng(seed)
    samples = data[rng.integers(0, n, size=(resamples, n))]
    dist = stat(samples)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(dist, [alpha, 1 - alpha])
    return Estimate(point, float(low), float(high), n)


@dataclass(frozen=True)
class PairedDifference:
    blocks: list[int]
    differences: list[float]
    mean_difference: Estimate  # arm − baseline, in the metric's unit
    relative_change: Estimate  # mean(arm) / mean(baseline) − 1


def paired_difference(
    baseline: Mapping[int, float | None],
    arm: Mapping[int, float | None],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedDifference:
    """Pairs the two arms by block (blocks where either value is missing are dropped)."""
    blocks = sorted(b for b in set(baseline) & set(arm) if _finite(baseline[b]) and _finite(arm[b]))
    a = np.asarray([baseline[b] for b in blocks], dtype=float)
    b = np.asarray([arm[b] for b in blocks], dtype=float)
    diffs = b - a
    mean_diff = bootstrap_ci(list(diffs), confidence=confidence, resamples=resamples, seed=seed)
    n = len(blocks)
    if n == 0:
        rel = Estimate(None, None, None, 0)
    else:
        point = _ratio_change(b.mean(), a.mean())
        if n == 1 or point is None:
            rel = Estimate(point, None, None, n)
        else:
            rng = np.random.default_rng(seed)
            idx = rng.integers(0, n, size=(resamples, n))
            ma, mb = a[idx].mean(axis=1), b[idx].mean(axis=1)
            ok = ma != 0
            dist = mb[ok] / ma[ok] - 1
            alpha = (1 - confidence) / 2
            low, high = np.quantile(dist, [alpha, 1 - alpha]) if len(dist) else (None, None)
            rel = Estimate(
                point,
                None if low is None else float(low),
                None if high is None else float(high),
                n,
            )
    return PairedDifference(blocks, [float(d) for d in diffs], mean_diff, rel)


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _ratio_change(arm_mean: float, base_mean: float) -> float | None:
    if base_mean == 0:
        return None
    return float(arm_mean / base_mean - 1)


def ecdf(values: Sequence[float | None]) -> tuple[list[float], list[float]]:
    """Sorted values and their cumulative fractions (i / n for the i-th smallest)."""
    data = np.sort(_clean(values))
    n = len(data)
    return [float(x) for x in data], [float((i + 1) / n) for i in range(n)]


def covariance_ellipse(
    xs: Sequence[float], ys: Sequence[float], *, nsigma: float = 1.0, points: int = 64
) -> tuple[list[float], list[float]] | None:
    """The `nsigma` contour of the 2-D Gaussian fitted to the points (mean, covariance), as a
    closed polyline; None with fewer than 2 points."""
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    if len(x) < 2:
        return None
    cov = np.cov(np.vstack([x, y]))
    eigenvalues, eigenvectors = np.linalg.eigh(cov)
    eigenvalues = np.clip(eigenvalues, 0, None)
    angle = np.linspace(0, 2 * np.pi, points)
    circle = np.vstack([np.cos(angle), np.sin(angle)])
    shape = eigenvectors @ (np.sqrt(eigenvalues)[:, np.newaxis] * circle) * nsigma
    return [float(v) for v in shape[0] + x.mean()], [float(v) for v in shape[1] + y.mean()]

import math

import numpy as np
import pytest

from pccstream.ab import stats


def test_bootstrap_of_constant_data_is_a_point():
    est = stats.bootstrap_ci([2.5] * 7, resamples=500)
    assert (est.value, est.low, est.high, est.n) == (2.5, 2.5, 2.5, 7)


def test_bootstrap_mean_and_ci_on_known_data():
    data = list(range(1, 11))  # mean 5.5
    est = stats.bootstrap_ci(data, resamples=4000, seed=1)
    assert est.value == pytest.approx(5.5)
    assert est.low is not None and est.high is not None
    assert est.low < 5.5 < est.high
    # Normal theory: mean ± 1.96 σ/√n (σ/√n = 0.908 with the population σ); the percentile
    # bootstrap is close to it.
    se = np.std(data) / math.sqrt(len(data))
    assert est.low == pytest.approx(5.5 - 1.96 * se, abs=0.25)
    assert est.high == pytest.approx(5.5 + 1.96 * se, abs=0.25)


def test_bootstrap_matches_normal_theory_on_a_large_sample():
    rng = np.random.default_rng(7)
    data = list(rng.normal(10.0, 2.0, size=400))
    est = stats.bootstrap_ci(data, resamples=3000, seed=2)
    width = est.high - est.low  # type: ignore[operator]
    assert width == pytest.approx(2 * 1.96 * 2.0 / math.sqrt(400), rel=0.15)


def test_bootstrap_is_seeded_and_drops_missing_values():
    a = stats.bootstrap_ci([1, 2, 3, None, float("nan"), 4], resamples=500, seed=5)
    b = stats.bootstrap_ci([1, 2, 3, 4], resamples=500, seed=5)
    assert a == b and a.n == 4
    c = stats.bootstrap_ci([1, 2, 3, 4], resamples=500, seed=6)
    assert (c.low, c.high) != (b.low, b.high) or c.value == b.value
    assert stats.bootstrap_ci([], resamples=10).value is None
    single = stats.bootstrap_ci([3.0])
    assert (single.value, single.low, single.high) == (3.0, None, None)
    assert single.format() == "3"


def test_confidence_level_widens_the_interval():
    data = [1, 5, 2, 8, 3, 9, 4, 7]
    narrow = stats.bootstrap_ci(data, confidence=0.5, resamples=2000)
    wide = stats.bootstrap_ci(data, confidence=0.99, resamples=2000)
    assert wide.low < narrow.low and wide.high > narrow.high  # type: ignore[operator]


def test_paired_difference_pairs_by_block():
    base = {0: 10.0, 1: 20.0, 2: 30.0, 3: None}
    arm = {0: 1.0, 1: 2.0, 2: 3.0, 3: 4.0, 4: 5.0}
    result = stats.paired_difference(base, arm, resamples=2000)
    assert result.blocks == [0, 1, 2]
    assert result.differences == [-9.0, -18.0, -27.0]
    assert result.mean_difference.value == pytest.approx(-18.0)
    # Every resample has arm = base / 10, so the relative change is exactly −90 %.
    assert result.relative_change.value == pytest.approx(-0.9)
    assert result.relative_change.low == pytest.approx(-0.9)
    assert result.relative_change.high == pytest.approx(-0.9)
    low, high = result.mean_difference.low, result.mean_difference.high
    assert low is not None and high is not None and -27.0 <= low < -18.0 < high <= -9.0


def test_paired_difference_removes_the_shared_network_effect():
    # A large per-block effect shared by both arms, a constant +1 arm effect: the paired CI
    # is a point, an unpaired comparison would be wide.
    rng = np.random.default_rng(3)
    network = {b: float(v) for b, v in enumerate(rng.normal(0, 50, size=12))}
    arm = {b: v + 1.0 for b, v in network.items()}
    result = stats.paired_difference(network, arm, resamples=1000)
    assert result.mean_difference.low == pytest.approx(1.0)
    assert result.mean_difference.high == pytest.approx(1.0)


def test_paired_difference_with_no_pairs():
    result = stats.paired_difference({0: 1.0}, {1: 2.0})
    assert result.blocks == [] and result.mean_difference.value is None
    assert result.relative_change.value is None


def test_ecdf():
    xs, ys = stats.ecdf([3, 1, None, 2, 2])
    assert xs == [1, 2, 2, 3]
    assert ys == [0.25, 0.5, 0.75, 1.0]


def test_covariance_ellipse_of_axis_aligned_data():
    # x has σ = 2, y has σ = 1 (sample σ), uncorrelated: the ellipse spans mean ± 2 and ± 1.
    xs = [-2.0, 2.0, -2.0, 2.0]
    ys = [-1.0, -1.0, 1.0, 1.0]
    sx, sy = np.std(xs, ddof=1), np.std(ys, ddof=1)
    ellipse = stats.covariance_ellipse(xs, ys, points=361)
    assert ellipse is not None
    ex, ey = ellipse
    assert max(ex) == pytest.approx(sx, rel=1e-3) and min(ex) == pytest.approx(-sx, rel=1e-3)
    assert max(ey) == pytest.approx(sy, rel=1e-3)
    assert stats.covariance_ellipse([1.0], [2.0]) is None


def test_estimate_format():
    est = stats.Estimate(0.0123, 0.01, 0.015, 5)
    assert est.format(100) == "1.23 [1, 1.5]"
    assert stats.Estimate(1234.5, 1000.0, 1500.0, 3).format() == "1234 [1000, 1500]"

"""pccstream.stats: the shared percentile, median and fairness definitions."""

from __future__ import annotations

import numpy as np
import pytest

from pccstream.stats import jain_index, median, percentile, percentile95_mahimahi


def test_percentile_interpolates_linearly_like_numpy() -> None:
    values = [5.0, 1.0, 3.0, 2.0]
    assert percentile(values, 50) == pytest.approx(2.5)
    assert percentile(values, 0) == 1.0 and percentile(values, 100) == 5.0
    for q in (10, 37.5, 95):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))
        assert percentile(np.array(values), q) == pytest.approx(percentile(values, q))
    assert percentile([], 50) is None


def test_median_ignores_missing_values() -> None:
    assert median([None, 4.0, 1.0, None, 2.0]) == 2.0
    assert median([None]) is None


def test_mahimahi_percentile_picks_an_element() -> None:
    values = np.arange(20, dtype=float)  # floor(0.95 * 20) = index 19
    assert percentile95_mahimahi(values) == 19.0
    assert percentile95_mahimahi(np.array([3.0])) == 3.0


def test_jain_index() -> None:
    assert jain_index([5.0, 5.0]) == 1.0
    assert jain_index([10.0, 0.0]) == 0.5
    assert jain_index([]) is None and jain_index([0.0, 0.0]) is None

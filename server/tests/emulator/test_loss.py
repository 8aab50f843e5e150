from __future__ import annotations

import math
import random

import pytest

from pccstream.emulator.loss import BernoulliLoss, GilbertElliottLoss, NoLoss, parse_loss
from pccstream.errors import UserError

N = 200_000


@pytest.mark.parametrize("p", [0.0001, 0.01, 0.02, 0.3])
def test_bernoulli_rate_within_sampling_error(p: float) -> None:
    m = BernoulliLoss(p, random.Random(42))
    lost = sum(m.lose() for _ in range(N))
    sigma = math.sqrt(N * p * (1 - p))
    assert abs(lost - N * p) <= 4 * sigma + 1


def test_bernoulli_is_deterministic_per_seed() -> None:
    a = [BernoulliLoss(0.1, random.Random(7)).lose() for _ in range(1)]
    s1 = BernoulliLoss(0.1, random.Random(7))
    s2 = BernoulliLoss(0.1, random.Random(7))
    assert [s1.lose() for _ in range(1000)] == [s2.lose() for _ in range(1000)]
    assert a


def _runs(seq: list[bool]) -> list[int]:
    runs, cur = [], 0
    for x in seq:
        if x:
            cur += 1
        elif cur:
            runs.append(cur)
            cur = 0
    return runs


def test_gilbert_elliott_mean_and_burst_length() -> None:
    m = parse_loss("ge:mean=0.02,burst=5", random.Random(3))
    assert isinstance(m, GilbertElliottLoss)
    seq = [m.lose() for _ in range(N)]
    rate = sum(seq) / N
    # bursty: effective sample size ~ N / burst, so allow a wider band than Bernoulli
    sigma = math.sqrt(0.02 * 0.98 * 5 / N) * 3
    assert abs(rate - 0.02) <= 4 * sigma
    mean_run = sum(_runs(seq)) / len(_runs(seq))
    assert 4.0 < mean_run < 6.0  # geometric bursts of mean 1/r = 5


def test_gilbert_elliott_general_parameters() -> None:
    m = GilbertElliottLoss(0.05, 0.2, random.Random(9), loss_good=0.001, loss_bad=0.5)
    expected = (0.2 * 0.001 + 0.05 * 0.5) / 0.25
    assert m.mean == pytest.approx(expected)
    rate = sum(m.lose() for _ in range(N)) / N
    assert abs(rate - expected) < 0.01


def test_bernoulli_is_not_bursty() -> None:
    m = BernoulliLoss(0.02, random.Random(1))
    seq = [m.lose() for _ in range(N)]
    assert sum(_runs(seq)) / len(_runs(seq)) < 1.1


@pytest.mark.parametrize(
    ("spec", "mean"), [(0.01, 0.01), ("1%", 0.01), ("0.005", 0.005), (0, 0.0),
                       ({"model": "gilbert-elliott", "p": 0.01, "r": 0.5}, 0.01 / 0.51)],
)
def test_parse_loss(spec, mean: float) -> None:  # noqa: ANN001
    assert parse_loss(spec, random.Random(0)).mean == pytest.approx(mean)


def test_zero_loss_is_no_loss() -> None:
    assert isinstance(parse_loss(0, random.Random(0)), NoLoss)


@pytest.mark.parametrize("spec", ["1.5", "-0.1", "lots", "ge:p=2,r=0.1", "ge:p=0.1", "ge:x=1"])
def test_parse_loss_rejects(spec: str) -> None:
    with pytest.raises(UserError):
        parse_loss(spec, random.Random(0), "--loss")

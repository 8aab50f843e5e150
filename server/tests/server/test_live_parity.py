"""live.fec parity policies: a fixed K, and `auto`, which follows the connection's loss."""

from __future__ import annotations

import pytest

from pccstream.contracts import AUTO_FEC_MAX_K
from pccstream.server.live_parity import (
    AUTO_FEC_MIN_K,
    FLOOR_K,
    LOSS_MEMORY_S,
    FixedParity,
    LossAdaptiveParity,
    k_for_loss,
    parity_policy,
)


class Counts:
    """A connection's (bytes sent, bytes lost), moved by the test."""

    def __init__(self) -> None:
        self.sent = 0
        self.lost = 0

    def __call__(self) -> tuple[int, int]:
        return self.sent, self.lost


@pytest.mark.parametrize(
    ("loss", "k"),
    [
        (0.0, 0),
        (0.0001, AUTO_FEC_MAX_K),  # rare random loss: the lightest parity auto sends
        (0.01, 8),  # (8 + 1) x 1 % = 0.09 expected losses per class
        (0.02, 4),
        (0.05, AUTO_FEC_MIN_K),
        (0.5, AUTO_FEC_MIN_K),  # never heavier than one parity per two fragments
    ],
)
def test_k_for_loss_keeps_the_expected_losses_per_parity_class_small(loss: float, k: int) -> None:
    assert k_for_loss(loss) == k


def test_a_fixed_k_is_a_fixed_k() -> None:
    assert FixedParity(4).k(0.0) == 4
    assert parity_policy(0, None).k(5.0) == 0


def test_auto_starts_protected_and_keeps_one_parity_per_chunk_once_the_path_is_clean() -> None:
    counts = Counts()
    parity = LossAdaptiveParity(counts)
    t = 0.0
    while t < LOSS_MEMORY_S:  # a new path is unknown: the lightest parity
        counts.sent += 30_000
        assert parity.k(t) == AUTO_FEC_MAX_K
        t += 0.125
    for _ in range(50):  # then 6.25 s more, nothing lost: one parity per chunk
        counts.sent += 30_000
        assert parity.k(t) == FLOOR_K
        t += 0.125
    counts.sent += 30_000
    counts.lost += 1_200  # one packet in ~1.5 MB: rare random loss
    assert parity.k(t) == AUTO_FEC_MAX_K
    # It stays on while the loss is within the memory ...
    lost_at = t
    while t < lost_at + LOSS_MEMORY_S - 0.5:
        t += 0.125
        counts.sent += 30_000
        assert parity.k(t) == AUTO_FEC_MAX_K
    # ... and falls back to the floor once it is older.
    for _ in range(10):
        t += 0.125
        counts.sent += 30_000
        parity.k(t)
    assert parity.k(t) == FLOOR_K


def test_auto_follows_the_loss_rate_of_its_window() -> None:
    counts = Counts()
    parity = LossAdaptiveParity(counts, memory_s=10.0)
    t = 0.0
    k = -1
    for _ in range(200):  # 20 s losing 5 %: the heaviest parity
        counts.sent += 10_000
        counts.lost += 500
        t += 0.125
        k = parity.k(t)
    assert k == AUTO_FEC_MIN_K
    for _ in range(200):  # then 1 %: the window forgets the 5 %
        counts.sent += 10_000
        counts.lost += 100
        t += 0.125
        k = parity.k(t)
    assert k == 8


def test_auto_reads_the_counters_at_most_every_tenth_of_a_second() -> None:
    calls = 0

    def counts() -> tuple[int, int]:
        nonlocal calls
        calls += 1
        return calls * 1000, calls  # loses 0.1 % whenever it is read

    parity = LossAdaptiveParity(counts)
    for i in range(30):  # one chunk every 1/60 s for half a second
        parity.k(i / 60)
    assert calls == 5


def test_auto_without_a_loss_source_sees_a_path_that_never_loses() -> None:
    parity = parity_policy("auto", None)
    assert parity.k(1.0) == AUTO_FEC_MAX_K
    assert parity.k(1.0 + LOSS_MEMORY_S) == FLOOR_K

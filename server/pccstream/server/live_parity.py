"""How much XOR parity a live datagram subscription sends (`live.fec`, shared/PROTOCOL.md
"Live over datagrams"): a fixed `K`, or `auto`, which follows the loss the connection sees.

Why `auto`: parity repairs a lost fragment without a round trip, which a playout delay of a few
frames cannot wait for, but on a path that loses nothing it is pure cost: 14-18 % more bytes
on the live ladder (at least one parity fragment per one-frame chunk), queued ahead of the next
frame (docs/live.md, "Parity that follows the loss"). So `auto` sends one parity per `K` data
fragments with `K` from the loss fraction of the last `LOSS_MEMORY_S` (XOR parity rebuilds one
loss per parity class of `K` + 1 fragments, so `K` keeps the expected losses per class,
(`K` + 1)·p, at most `CLASS_LOSS_BUDGET`). A new connection's path is unknown, so it starts
protected (the lightest such parity, as if it had just lost): without that the session's first
loss waits a NACK's round trip, and measured on `video-rttflap` that was the one loss in each
lossy block that stalled. Once the connection has gone `LOSS_MEMORY_S` without a loss it sends
one parity fragment per chunk (`FLOOR_K`), not none: 30 s of a live stream are a few thousand
packets, which bound the loss rate only below ~3/N (the rule of three, 95 %), not below the
thesis's 0.01 %, and the first loss after parity went off waited a round trip and stalled
(session 29, `video-rttflap` block 2 at 39 s). One parity per chunk rebuilds any one loss in
it for the least bytes parity can cost.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from pccstream.contracts import AUTO_FEC_MAX_K, MAX_LIVE_FEC

# `live.fec`: data fragments per parity fragment, or "auto".
LiveFec = int | Literal["auto"]

# Losses are remembered this long: random loss comes back at a rate of its own (0.01 % at
# 2.5 Mbit/s is one loss every ~40 s), so parity stays on between losses, while a path that
# stopped losing sheds it within this time.
LOSS_MEMORY_S = 30.0
# Expected losses per parity class; above one, two losses in a class (unrepairable) get common.
CLASS_LOSS_BUDGET = 0.1
# The heaviest parity `auto` sends: one per two data fragments (half as many bytes again).
AUTO_FEC_MIN_K = 2
# What `auto` sends on a path that has not lost for `LOSS_MEMORY_S`: one parity fragment per
# chunk (a one-frame chunk is at most a few dozen 1 kB fragments, fewer than `K`).
FLOOR_K = MAX_LIVE_FEC
# Loss counters are read at most this often (they move once per ACK; chunks come 30-60 a second).
SAMPLE_INTERVAL_S = 0.1

# The connection's (bytes sent, bytes declared lost) so far.
LossCounts = Callable[[], tuple[int, int]]


class ParityPolicy(Protocol):
    def k(self, now: float) -> int:
        """Data fragments per parity fragment for a chunk sent at `now` (0: no parity)."""
        ...


@dataclass(frozen=True)
class FixedParity:
    value: int

    def k(self, now: float) -> int:
        return self.value


def k_for_loss(loss_fraction: float) -> int:
    """Parity for a path losing `loss_fraction` of its bytes: 0 when it loses nothing, else
    the largest `K` in [AUTO_FEC_MIN_K, AUTO_FEC_MAX_K] with (K + 1)·p ≤ CLASS_LOSS_BUDGET."""
    if loss_fraction <= 0:
        return 0
    k = math.floor(CLASS_LOSS_BUDGET / loss_fraction) - 1
    return max(AUTO_FEC_MIN_K, min(AUTO_FEC_MAX_K, k))


class LossAdaptiveParity:
    """`live.fec=auto`: parity from the loss fraction over the last `memory_s`."""

    def __init__(self, loss_counts: LossCounts, *, memory_s: float | None = None) -> None:
        self._loss_counts = loss_counts
        self._memory_s = LOSS_MEMORY_S if memory_s is None else memory_s
        # (time, bytes sent, bytes lost), oldest first; the first sample is at or before the
        # window's start once the window is full.
        self._samples: deque[tuple[float, int, int]] = deque()
        self._started_at: float | None = None
        self._k = 0

    def k(self, now: float) -> int:
        if self._samples and now - self._samples[-1][0] < SAMPLE_INTERVAL_S:
            return self._k
        sent, lost = self._loss_counts()
        if self._started_at is None:
            self._started_at = now
        self._samples.append((now, sent, lost))
        while len(self._samples) > 1 and self._samples[1][0] <= now - self._memory_s:
            self._samples.popleft()
        _, sent_then, lost_then = self._samples[0]
        sent_in_window = sent - sent_then
        lost_in_window = lost - lost_then
        fraction = lost_in_window / sent_in_window if sent_in_window > 0 else 0.0
        if lost_in_window > 0:
            self._k = k_for_loss(fraction)
        elif now - self._started_at < self._memory_s:
            self._k = AUTO_FEC_MAX_K  # a new path: as if it had just lost
        else:
            self._k = FLOOR_K
        return self._k


def parity_policy(fec: LiveFec, loss_counts: LossCounts | None) -> ParityPolicy:
    """The policy for `live.fec=fec`; `auto` without a loss source sees no loss."""
    if fec == "auto":
        return LossAdaptiveParity(loss_counts or (lambda: (0, 0)))
    return FixedParity(fec)

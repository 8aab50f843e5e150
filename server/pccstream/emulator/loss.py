"""Random loss: Bernoulli and Gilbert-Elliott (two-state bursty). Every model takes its own
seeded `random.Random`, so a run is reproducible from the seed."""

from __future__ import annotations

import random
from typing import Any

from pccstream.errors import UserError


class NoLoss:
    mean = 0.0

    def lose(self) -> bool:
        return False

    def describe(self) -> str:
        return "none"


class BernoulliLoss:
    def __init__(self, p: float, rng: random.Random) -> None:
        if not 0.0 <= p <= 1.0:
            raise UserError(f"loss probability {p} is impossible: must be within 0..1")
        self.p = p
        self.mean = p
        self._random = rng.random

    def lose(self) -> bool:
        return self._random() < self.p

    def describe(self) -> str:
        return f"bernoulli:{self.p:g}"


class GilbertElliottLoss:
    """Good/bad Markov chain stepped once per packet: p = P(good->bad), r = P(bad->good);
    a packet is lost with `loss_good` in the good state and `loss_bad` in the bad state."""

    def __init__(
        self,
        p: float,
        r: float,
        rng: random.Random,
        loss_good: float = 0.0,
        loss_bad: float = 1.0,
    ) -> None:
        for name, v in (("p", p), ("r", r), ("loss_good", loss_good), ("loss_bad", loss_bad)):
            if not 0.0 <= v <= 1.0:
                raise UserError(f"gilbert-elliott {name}={v} is impossible: must be within 0..1")
        if p + r == 0:
            raise UserError("gilbert-elliott p and r cannot both be 0")
        self.p, self.r, self.loss_good, self.loss_bad = p, r, loss_good, loss_bad
        self.mean = (r * loss_good + p * loss_bad) / (p + r)
        self._random = rng.random
        # Start in the stationary distribution so short runs are unbiased.
        self.bad = self._random() < p / (p + r)

    def lose(self) -> bool:
        rnd = self._random
        if self.bad:
            if rnd() < self.r:
                self.bad = False
        elif rnd() < self.p:
            self.bad = True
        return rnd() < (self.loss_bad if self.bad else self.loss_good)

    def describe(self) -> str:
        return (
            f"ge:p={self.p:g},r={self.r:g},loss_good={self.loss_good:g},loss_bad={self.loss_bad:g}"
        )


LossModel = NoLoss | BernoulliLoss | GilbertElliottLoss


def parse_loss(
    spec: str | float | dict[str, Any], rng: random.Random, where: str = "loss"
) -> LossModel:
    """0.01 | '1%' | 'ge:p=0.01,r=0.3[,loss_good=0,loss_bad=1]' | 'ge:mean=0.01,burst=4'.

    `burst` is the mean length (packets) of a bad period, so r = 1/burst and, with loss_bad = 1,
    p is chosen to give the requested mean loss."""
    if isinstance(spec, int | float):
        return _bernoulli(float(spec), rng, where)
    if isinstance(spec, dict):
        return _ge(dict(spec), rng, where)
    s = spec.strip().lower()
    if s.startswith(("ge:", "gilbert-elliott:", "gilbert:")):
        opts: dict[str, float] = {}
        for item in filter(None, (x.strip() for x in s.split(":", 1)[1].split(","))):
            key, eq, val = item.partition("=")
            if not eq:
                raise UserError(f"{where}: gilbert-elliott option {item!r} needs key=value")
            try:
                opts[key.strip()] = _number(val.strip())
            except ValueError:
                raise UserError(f"{where}: {key}={val!r} is not a number") from None
        return _ge(opts, rng, where)
    try:
        p = _number(s)
    except ValueError:
        raise UserError(
            f"{where}: cannot parse loss {spec!r} (expected 0.01, 1%, or ge:p=..,r=..)"
        ) from None
    return _bernoulli(p, rng, where)


def _number(s: str) -> float:
    return float(s[:-1]) / 100.0 if s.endswith("%") else float(s)


def _bernoulli(p: float, rng: random.Random, where: str) -> LossModel:
    if not 0.0 <= p <= 1.0:
        raise UserError(f"{where}: loss probability {p} is impossible: must be within 0..1")
    return NoLoss() if p == 0 else BernoulliLoss(p, rng)


def _ge(opts: dict[str, Any], rng: random.Random, where: str) -> LossModel:
    numbers: dict[str, float] = {}
    for k, v in opts.items():
        if k == "model":
            continue
        try:
            numbers[k] = float(v)
        except (TypeError, ValueError):
            raise UserError(
                f"{where}: gilbert-elliott option {k!r}={v!r} is not a number") from None
    opts = numbers
    known = {"p", "r", "loss_good", "loss_bad", "mean", "burst"}
    unknown = set(opts) - known
    if unknown:
        raise UserError(f"{where}: unknown gilbert-elliott option(s) {sorted(unknown)}")
    if "mean" in opts:
        mean, burst = opts["mean"], opts.get("burst", 1.0)
        if not 0 <= mean < 1 or burst < 1:
            raise UserError(f"{where}: need 0 <= mean < 1 and burst >= 1 packets")
        r = 1.0 / burst
        p = mean * r / (1.0 - mean)
        if p > 1:
            raise UserError(f"{where}: mean {mean} with burst {burst} is impossible")
        return GilbertElliottLoss(p, r, rng)
    if "p" not in opts or "r" not in opts:
        raise UserError(f"{where}: gilbert-elliott needs p and r (or mean and burst)")
    return GilbertElliottLoss(
        opts["p"], opts["r"], rng, opts.get("loss_good", 0.0), opts.get("loss_bad", 1.0)
    )

"""Allegro: starting, randomized controlled trials, rate adjusting, utilities."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from pccstream.cc.allegro import Allegro, AllegroParams
from pccstream.cc.monitor_interval import MiResult
from pccstream.cc.pcc_sender import MiTag
from pccstream.cc.utility import MBIT

from .cc_driver import Driver, PathSample


def mbps(rate: float) -> float:
    return rate * 8 / MBIT


def result(rate: float, tag: MiTag, *, useful: bool = True) -> MiResult:
    return MiResult(id=0, tag=tag, target_rate=rate, send_rate=rate, delivery_rate=rate,
                    loss=0.0, rtt_mean=0.03, rtt_gradient=0.0, packets_sent=30, start_time=0,
                    finish_time=0, useful=useful, reason="" if useful else "app-limited")


def in_decision(rate_mbps: float = 10.0, seed: int = 1, **params: float) -> Allegro:
    a = Allegro(AllegroParams(**params), random.Random(seed))  # type: ignore[arg-type]
    a.rate = rate_mbps * MBIT / 8
    a._enter_decision()
    return a


def run_trial(a: Allegro, higher_wins: list[bool]) -> str:
    """Feed the four trial MIs; pair i favours the higher rate iff higher_wins[i]."""
    verdict = ""
    for slot, rate in enumerate(a._trial_rates):
        pair = slot // 2
        is_hi = rate > a.rate
        u = 10.0 + (1.0 if is_hi == higher_wins[pair] else 0.0)
        verdict = a.on_mi_finished(0.0, result(rate, MiTag(a.epoch, "probe", slot)), u).decision
    return verdict


def loss_path(capacity: float):
    def path(rate: float) -> PathSample:
        return PathSample(rtt=0.03, loss=max(0.0, (rate - capacity) / rate))
    return path


def test_starting_doubles_then_enters_decision() -> None:
    d = Driver(Allegro(), loss_path(6.0))
    events = d.run(4)
    assert [e["decision"] for e in events] == ["double", "double", "double", "exit-slow-start"]
    assert d.ctrl.state == "decision" and mbps(d.ctrl.rate) == pytest.approx(4.0)


@pytest.mark.parametrize("seed", range(4))
def test_trial_is_two_randomized_pairs(seed: int) -> None:
    a = in_decision(10.0, seed=seed, epsilon_min=0.01)
    rates = [round(mbps(r), 3) for r in a._trial_rates]
    assert sorted(rates[:2]) == sorted(rates[2:]) == [9.9, 10.1]


def test_pair_orders_vary() -> None:
    a = in_decision(10.0)
    orders = set()
    for _ in range(20):
        a._enter_decision()
        orders.add((a._trial_rates[0] > a.rate, a._trial_rates[2] > a.rate))
    assert len(orders) == 4


def test_conclusive_trial_then_rate_adjusting_sequence() -> None:
    a = in_decision(10.0)
    assert run_trial(a, [True, True]) == "increase"
    assert a.state == "adjusting" and a.direction == 1
    eps = 0.01
    r0 = 10.0 * (1 + eps)  # the winning trial rate
    assert mbps(a.rate) == pytest.approx(r0 * (1 + 1 * eps))
    rates = [mbps(a.rate)]
    u = 100.0
    for n in (2, 3, 4):
        u += 1
        v = a.on_mi_finished(0.0, result(a.rate, MiTag(a.epoch, "adjust")), u)
        assert v.decision == "continue" and a.n == n
        assert mbps(a.rate) == pytest.approx(rates[-1] * (1 + n * eps))
        rates.append(mbps(a.rate))
    # Utility falls: back to the previous rate, new trial at eps_min.
    v = a.on_mi_finished(0.0, result(a.rate, MiTag(a.epoch, "adjust")), 0.0)
    assert v.decision == "revert" and a.state == "decision"
    assert mbps(a.rate) == pytest.approx(rates[-2]) and a.epsilon == 0.01


def test_decrease_direction() -> None:
    a = in_decision(10.0)
    assert run_trial(a, [False, False]) == "decrease"
    assert mbps(a.rate) == pytest.approx(10.0 * 0.99 * 0.99)


def test_inconclusive_trials_grow_epsilon_to_max() -> None:
    a = in_decision(10.0)
    seen = []
    for _ in range(6):
        assert run_trial(a, [True, False]) == "inconclusive"
        seen.append(round(a.epsilon, 3))
    assert seen == [0.02, 0.03, 0.04, 0.05, 0.05, 0.05]
    assert mbps(a.rate) == pytest.approx(10.0) and a.inconclusive_trials == 6
    assert sorted(round(mbps(r), 2) for r in a._trial_rates[:2]) == [9.5, 10.5]
    assert run_trial(a, [True, True]) == "increase" and a.epsilon == 0.01


def test_useless_trial_mi_restarts_the_trial() -> None:
    a = in_decision(10.0)
    epoch = a.epoch
    v = a.on_mi_finished(0.0, result(a._trial_rates[0], MiTag(epoch, "probe", 0),
                                     useful=False), 1.0)
    assert v.decision == "retrial:app-limited" and a.epoch == epoch + 1


def test_timeout_halves_and_retrials() -> None:
    a = in_decision(10.0)
    v = a.on_mi_timeout(0.0)
    assert v.decision == "timeout" and mbps(a.rate) == pytest.approx(5.0)
    assert a.state == "decision"


def test_latency_variant_prefers_lower_rate_when_rtt_rises() -> None:
    a = Allegro(AllegroParams(latency=True))
    tag = MiTag(0, "adjust")
    base = result(10 * MBIT / 8, tag)
    a.mi_utility(base)  # remembers the RTT
    u_rise, _ = a.mi_utility(replace(base, rtt_mean=0.04))
    a2 = Allegro(AllegroParams(latency=True))
    a2.mi_utility(base)
    u_flat, _ = a2.mi_utility(base)
    assert u_rise < u_flat


def test_converges_on_loss_path() -> None:
    d = Driver(Allegro(), loss_path(8.0))
    events = d.run(150)
    late = [e["target_rate_bps"] / 1e6 for e in events[-50:]]
    assert 6.0 < sum(late) / len(late) < 9.5

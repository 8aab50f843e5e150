"""PCC Allegro (thesis chapter 3; Dong et al., NSDI 2015): randomized controlled trials on a
loss-based (or latency-aware) sigmoid utility.

States:
* starting    - double the rate per improving MI until utility first falls (SlowStart).
* decision    - four MIs: two pairs {r(1+eps), r(1-eps)}, each pair in random order. If both
                pairs favour the same direction, move to rate adjusting from r(1+dir*eps);
                otherwise the trial was inconclusive: eps grows by eps_min (up to eps_max)
                and the trial repeats.
* adjusting   - r_n = r_{n-1} * (1 + n*eps_min*dir) while utility keeps improving; when it
                falls, revert to r_{n-1} and run a new trial with eps = eps_min.

`allegro` uses u = T*S(L - 0.05) - x*L; `allegro-latency` the variant of thesis 3.3, which
also multiplies by a sigmoid of the RTT ratio of consecutive MIs and divides by the RTT.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .monitor_interval import MiResult
from .params import param
from .pcc_sender import SLOW_START_HOLDS, MiTag, PccParams, PccSender, SlowStart, Verdict
from .utility import allegro_latency_utility, allegro_utility


@dataclass(frozen=True)
class AllegroParams(PccParams):
    mi_rtts: float = param(1.5, "MI length in smoothed RTTs (thesis: 1 to 2 RTTs)",
                           lo=0.1, hi=10.0)
    epsilon_min: float = param(0.01, "smallest trial step and rate-adjusting unit",
                               lo=0.001, hi=0.5)
    epsilon_max: float = param(0.05, "largest trial step after inconclusive trials",
                               lo=0.001, hi=0.5)
    alpha: float = param(100.0, "steepness of the loss sigmoid", lo=1.0, hi=10_000.0)
    loss_threshold: float = param(0.05, "loss rate where the loss sigmoid falls off",
                                  lo=0.0, hi=1.0)
    latency: bool = param(False, "use the latency-aware utility of thesis 3.3")
    beta: float = param(100.0, "steepness of the RTT-ratio sigmoid (latency utility)",
                        lo=1.0, hi=10_000.0)
    rtt_tolerance: float = param(0.05, "RTT ratios within 1 +- this count as 1 (latency "
                                 "utility)", lo=0.0, hi=1.0)


class Allegro(PccSender):
    name = "allegro"

    def __init__(self, params: AllegroParams | None = None,
                 rng: random.Random | None = None) -> None:
        self.p = params or AllegroParams()
        if self.p.epsilon_max < self.p.epsilon_min:
            raise ValueError("epsilon_max must be >= epsilon_min")
        super().__init__(self.p, rng or random.Random(0))
        self.slow_start = SlowStart.from_params(self.p, full_pipe=bool(self.p.latency))
        self.epsilon = self.p.epsilon_min
        self._trial_rates: list[float] = []
        self._trials_issued = 0
        self._trial_results: dict[int, tuple[MiResult, float]] = {}
        self.direction = 0
        self.n = 0  # rate-adjusting step counter
        self._ref_rate = 0.0
        self._ref_utility = 0.0
        self._prev_rtt = 0.0
        self.inconclusive_trials = 0

    def mi_utility(self, result: MiResult) -> tuple[float, float]:
        p = self.p
        x = self.mbps(result.send_rate)
        if not p.latency:
            return allegro_utility(x, result.loss, alpha=p.alpha,
                                   loss_threshold=p.loss_threshold), 0.0
        prev = self._prev_rtt
        if result.useful and result.rtt_mean > 0:
            self._prev_rtt = result.rtt_mean
        return allegro_latency_utility(
            x, result.loss, result.rtt_mean, prev, alpha=p.alpha, beta=p.beta,
            loss_threshold=p.loss_threshold, rtt_tolerance=p.rtt_tolerance), 0.0

    def plan_next_mi(self, now: float) -> tuple[float, MiTag]:
        if self.state == "decision":
            if self._trials_issued < len(self._trial_rates):
                i = self._trials_issued
                self._trials_issued += 1
                return self._trial_rates[i], MiTag(self.epoch, "probe", i)
            return self.rate, MiTag(self.epoch, "hold")
        role = "start" if self.state == "starting" else "adjust"
        return self.rate, MiTag(self.epoch, role)

    def on_mi_finished(self, now: float, result: MiResult, utility: float) -> Verdict:
        assert isinstance(result.tag, MiTag)
        role = result.tag.role
        if not result.useful:
            if role == "probe":
                self._enter_decision()
                return Verdict("retrial:" + result.reason)
            return Verdict("ignored:" + result.reason)
        if self.state == "starting":
            action = self.slow_start.on_result(
                result.target_rate, utility, self.rate, delivery=result.delivery_rate,
                send=result.send_rate, ack_frames=result.rtt_samples,
                latency_only=result.loss < self.p.loss_threshold, send_fill=result.send_fill)
            old = self.rate
            if action in SLOW_START_HOLDS:
                return Verdict("hold:" + action)
            if action == "double":
                self.rate = self.clamp(2 * self.rate)
                return Verdict("double", self.rate - old)
            if action == "hold":
                return Verdict("hold")
            self.rate = self.clamp(self.slow_start.best_rate)
            self.epsilon = self.p.epsilon_min
            self._enter_decision()
            return Verdict("exit-slow-start", self.rate - old)
        if self.state == "decision":
            if role != "probe":
                return Verdict("wait")
            self._trial_results[result.tag.slot] = (result, utility)
            if len(self._trial_results) < len(self._trial_rates):
                return Verdict("wait")
            return self._decide()
        return self._adjust(result, utility)

    def on_mi_timeout(self, now: float) -> Verdict:
        old = self.rate
        self.rate = self.clamp(self.rate / 2)
        self.epsilon = self.p.epsilon_min
        self._enter_decision()
        return Verdict("timeout", self.rate - old)

    def on_timeout_undone(self, now: float, rate: float) -> Verdict:
        old = self.rate
        self.rate = rate
        self.epsilon = self.p.epsilon_min
        self._enter_decision()
        return Verdict("timeout-undone", self.rate - old)

    def _enter_decision(self) -> None:
        self.state = "decision"
        self.new_epoch()
        hi = self.rate * (1 + self.epsilon)
        lo = self.rate * (1 - self.epsilon)
        rates: list[float] = []
        for _ in range(2):  # two randomized controlled pairs
            rates += [hi, lo] if self.rng.random() < 0.5 else [lo, hi]
        self._trial_rates = rates
        self._trials_issued = 0
        self._trial_results = {}

    def _decide(self) -> Verdict:
        votes = []
        winners: list[float] = []
        for pair in (0, 2):
            (ra, ua), (rb, ub) = self._trial_results[pair], self._trial_results[pair + 1]
            hi_first = ra.target_rate > rb.target_rate
            u_hi, u_lo = (ua, ub) if hi_first else (ub, ua)
            votes.append(1 if u_hi > u_lo else -1)
            winners.append(max(u_hi, u_lo))
        if votes[0] != votes[1]:
            self.inconclusive_trials += 1
            self.epsilon = min(self.epsilon + self.p.epsilon_min, self.p.epsilon_max)
            self._enter_decision()
            return Verdict("inconclusive")
        self.direction = votes[0]
        old = self.rate
        # Start adjusting from the rate that won the trial.
        self._ref_rate = self.clamp(self.rate * (1 + self.direction * self.epsilon))
        self._ref_utility = sum(winners) / 2
        self.n = 1
        self.rate = self.clamp(self._ref_rate * (1 + self.n * self.p.epsilon_min * self.direction))
        self.epsilon = self.p.epsilon_min
        self.state = "adjusting"
        self.new_epoch()
        return Verdict("increase" if self.direction > 0 else "decrease", self.rate - old)

    def _adjust(self, result: MiResult, utility: float) -> Verdict:
        old = self.rate
        if utility > self._ref_utility:
            self._ref_rate, self._ref_utility = result.target_rate, utility
            self.n += 1
            self.rate = self.clamp(result.target_rate
                                   * (1 + self.n * self.p.epsilon_min * self.direction))
            self.new_epoch()
            return Verdict("continue", self.rate - old)
        self.rate = self._ref_rate
        self.epsilon = self.p.epsilon_min
        self._enter_decision()
        return Verdict("revert", self.rate - old)

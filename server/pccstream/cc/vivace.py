"""PCC Vivace (thesis chapter 4; Dong et al., NSDI 2018): online gradient ascent on a
latency-aware utility, one decision per probe pair.

States:
* starting - double the rate per improving MI until utility first falls (SlowStart).
* probing  - send r(1+eps) and r(1-eps) in random order; gradient
             gamma = (u+ - u-) / (2 eps r); "double check": if the higher rate saw *less*
             loss than the lower one, the pair is noise-dominated and is run once more.
* moving   - step theta0 * m(tau) * gamma, bounded by omega*r, and keep stepping while the
             gradient between consecutive rates keeps its sign; when it flips, return to the
             last better rate and probe again.

Confidence amplifier m(tau) = tau for tau <= 3, 2*tau - 3 beyond; tau counts consecutive
decisions in one direction and resets when the direction changes. Dynamic change boundary
omega = omega0 + k*delta: k grows by one each time a step is clipped, otherwise drops to the
smallest value whose boundary covers the step, and resets on a direction change.
An MI timeout halves the rate and probes afresh. Rates in Mbit/s inside the utility.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from .monitor_interval import MiResult
from .params import param
from .pcc_sender import MiTag, PccParams, PccSender, SlowStart, Verdict
from .utility import MBIT, filter_rtt_gradient, vivace_utility

# m(tau) is linear up to this many consecutive same-direction decisions, then grows 2x.
AMPLIFIER_LINEAR_UNTIL = 3


@dataclass(frozen=True)
class VivaceParams(PccParams):
    t: float = param(0.9, "throughput exponent of the utility (0 < t < 1)", lo=0.01, hi=0.99)
    b: float = param(900.0, "latency coefficient: penalty per Mbit/s per unit dRTT/dt "
                     "(0 = vivace-loss)", lo=0.0, hi=1e6)
    c: float = param(11.35, "loss coefficient: penalty per Mbit/s per unit loss rate; a flow "
                     "with a larger c settles at a smaller share (thesis 4.3.6)", lo=0.0, hi=1e6)
    epsilon: float = param(0.05, "probing step: probes send at r(1+eps) and r(1-eps)",
                           lo=0.001, hi=0.5)
    theta0: float = param(0.3, "conversion of utility gradient (per Mbit/s) into a rate step "
                          "(Mbit/s); tuned on the link model, see docs/cc.md (0.15 with "
                          "rtt_gradient_confidence=1 trades live stalls for bulk delay)",
                          lo=0.0001, hi=100.0)
    omega0: float = param(0.05, "initial change boundary, as a fraction of the rate",
                          lo=0.001, hi=1.0)
    delta: float = param(0.1, "change-boundary increment per consecutive clipped step",
                         lo=0.0, hi=1.0)
    rtt_gradient_filter: float = param(
        0.01, "|dRTT/dt| below this is measurement noise and counts as 0", lo=0.0, hi=1.0)
    rtt_gradient_confidence: float = param(
        2.0, "dRTT/dt counts only when it exceeds this many standard errors of the MI's "
        "regression slope, else it is noise and counts as 0 (0 = off; see docs/cc.md, "
        "real stack)", lo=0.0, hi=100.0)
    ss_loss_ignore: float = param(
        0.1, "slow start ignores loss rates below this (random loss must not end it)",
        lo=0.0, hi=1.0)
    ss_rtt_gradient_ignore: float = param(
        0.05, "slow start ignores |dRTT/dt| below this (ack-clock jitter of small early MIs)",
        lo=0.0, hi=10.0)
    reward_rtt_decrease: bool = param(
        False, "let a falling RTT (dRTT/dt < 0) raise utility as the thesis formula does; "
        "off clamps the gradient at 0 like PCC-Uspace")
    double_check: bool = param(True, "re-run a probe pair whose higher rate saw less loss")
    moving: bool = param(
        True, "after a decision, keep stepping on the gradient between consecutive MIs "
        "(PCC-Uspace's DECISION_MADE state) instead of probing before every step")


class Vivace(PccSender):
    name = "vivace"

    def __init__(self, params: VivaceParams | None = None,
                 rng: random.Random | None = None) -> None:
        self.p = params or VivaceParams()
        super().__init__(self.p, rng or random.Random(0))
        self.slow_start = SlowStart()
        # probing
        self._probe_rates: list[float] = []  # bytes/s, in send order
        self._probes_issued = 0
        self._probe_results: dict[int, tuple[MiResult, float]] = {}
        self._double_checked = False
        self._first_run: tuple[float, float] | None = None  # (u_hi, u_lo) before a re-run
        self.double_checks = 0
        # moving and learning
        self.direction = 0  # +1 up, -1 down, 0 none yet
        self.tau = 0  # consecutive decisions in `direction`
        self.k = 0  # change-boundary level
        self._ref_rate = 0.0  # last rate with a known utility, bytes/s
        self._ref_utility = 0.0

    # -- utility ---------------------------------------------------------------------------

    def mi_utility(self, result: MiResult) -> tuple[float, float]:
        p = self.p
        gradient = filter_rtt_gradient(result.rtt_gradient, p.rtt_gradient_filter)
        if abs(gradient) <= p.rtt_gradient_confidence * result.rtt_gradient_stderr:
            gradient = 0.0  # not distinguishable from ACK-path noise
        if not p.reward_rtt_decrease:
            gradient = max(gradient, 0.0)
        loss = result.loss
        if isinstance(result.tag, MiTag) and result.tag.role == "start":
            if abs(gradient) < p.ss_rtt_gradient_ignore:
                gradient = 0.0
            if loss < p.ss_loss_ignore:
                loss = 0.0
        x = self.mbps(result.send_rate)
        return vivace_utility(x, gradient, loss, t=p.t, b=p.b, c=p.c), gradient

    # -- rates of new MIs ------------------------------------------------------------------

    def plan_next_mi(self, now: float) -> tuple[float, MiTag]:
        if self.state == "probing":
            if self._probes_issued < len(self._probe_rates):
                i = self._probes_issued
                self._probes_issued += 1
                return self._probe_rates[i], MiTag(self.epoch, "probe", i)
            return self.rate, MiTag(self.epoch, "hold")
        role = "start" if self.state == "starting" else "move"
        return self.rate, MiTag(self.epoch, role)

    # -- decisions -------------------------------------------------------------------------

    def on_mi_finished(self, now: float, result: MiResult, utility: float) -> Verdict:
        assert isinstance(result.tag, MiTag)
        role = result.tag.role
        if not result.useful:
            if role == "probe":
                # A probe that did not send at its rate proves nothing: run the pair again.
                self._enter_probing()
                return Verdict("reprobe:" + result.reason)
            return Verdict("ignored:" + result.reason)
        if self.state == "starting":
            return self._starting(result, utility)
        if self.state == "probing":
            if role != "probe":
                return Verdict("wait")
            self._probe_results[result.tag.slot] = (result, utility)
            if len(self._probe_results) < len(self._probe_rates):
                return Verdict("wait")
            return self._decide_from_probes()
        return self._moving(result, utility)

    def on_mi_timeout(self, now: float) -> Verdict:
        old = self.rate
        self.rate = self.clamp(self.rate / 2)
        self.direction, self.tau, self.k = 0, 0, 0
        self._enter_probing()
        return Verdict("timeout", self.rate - old)

    def _starting(self, result: MiResult, utility: float) -> Verdict:
        action = self.slow_start.on_result(result.target_rate, utility, self.rate)
        if action == "double":
            old = self.rate
            self.rate = self.clamp(2 * self.rate)
            return Verdict("double", self.rate - old)
        if action == "hold":
            return Verdict("hold")
        old = self.rate
        self.rate = self.clamp(self.slow_start.best_rate)
        self._enter_probing()
        return Verdict("exit-slow-start", self.rate - old)

    def _enter_probing(self) -> None:
        self.state = "probing"
        self.new_epoch()
        eps = self.p.epsilon
        hi, lo = self.rate * (1 + eps), self.rate * (1 - eps)
        self._probe_rates = [hi, lo] if self.rng.random() < 0.5 else [lo, hi]
        self._probes_issued = 0
        self._probe_results = {}

    def _decide_from_probes(self) -> Verdict:
        pairs = [self._probe_results[i] for i in range(len(self._probe_rates))]
        (hi, u_hi), (lo, u_lo) = sorted(pairs, key=lambda ru: -ru[0].target_rate)
        if self.p.double_check and not self._double_checked and hi.loss < lo.loss:
            # More rate yet less loss: random loss or noise dominated this pair. Run it
            # again and decide on both runs together.
            self._double_checked = True
            self._first_run = (u_hi, u_lo)
            self.double_checks += 1
            self._enter_probing()
            return Verdict("double-check")
        if self._first_run is not None:
            u_hi, u_lo = (u_hi + self._first_run[0]) / 2, (u_lo + self._first_run[1]) / 2
        self._double_checked = False
        self._first_run = None
        spread = self.mbps(hi.target_rate) - self.mbps(lo.target_rate)
        # Probes clamped to the same rate (at a rate bound) carry no gradient.
        gamma = (u_hi - u_lo) / spread if spread > 0 else 0.0
        center = self.rate
        # Reference point for the moving state: the utility at the centre rate, estimated
        # as the mean of the two probes (first-order).
        self._ref_rate, self._ref_utility = center, (u_hi + u_lo) / 2
        if gamma == 0.0:
            self._enter_probing()
            return Verdict("inconclusive")
        direction = 1 if gamma > 0 else -1
        if direction == self.direction:
            self.tau += 1
        else:
            self.direction, self.tau, self.k = direction, 1, 0
        step = self._step(gamma)
        self.rate = self.clamp(center + step)
        if self.p.moving:
            self.state = "moving"
            self.new_epoch()
        else:
            self._enter_probing()
        return Verdict("increase" if direction > 0 else "decrease", self.rate - center)

    def _moving(self, result: MiResult, utility: float) -> Verdict:
        rate = result.target_rate
        # Too small a move to measure a gradient over: probe around the new rate instead of
        # dividing noise by a tiny rate difference.
        if abs(rate - self._ref_rate) < self.p.epsilon * rate * 0.5:
            self._enter_probing()
            return Verdict("probe-again")
        gamma = (utility - self._ref_utility) / (self.mbps(rate) - self.mbps(self._ref_rate))
        if gamma != 0.0 and (gamma > 0) == (self.direction > 0):
            self.tau += 1
            self._ref_rate, self._ref_utility = rate, utility
            step = self._step(gamma)
            old = self.rate
            self.rate = self.clamp(rate + step)
            self.new_epoch()
            return Verdict("continue", self.rate - old)
        # The gradient turned: go back to the better rate, reset the learning state.
        old = self.rate
        self.rate = self.clamp(self._ref_rate)
        self.direction, self.tau, self.k = 0, 0, 0
        self._enter_probing()
        return Verdict("reverse", self.rate - old)

    # -- step size -------------------------------------------------------------------------

    @staticmethod
    def amplifier(tau: int) -> float:
        """m(tau) of thesis 4.4.2."""
        return float(tau) if tau <= AMPLIFIER_LINEAR_UNTIL else float(2 * tau - 3)

    def boundary(self) -> float:
        """omega = omega0 + k*delta, the largest step as a fraction of the rate."""
        return self.p.omega0 + self.k * self.p.delta

    def _step(self, gamma: float) -> float:
        """Signed rate change in bytes/s for utility gradient `gamma` (per Mbit/s)."""
        p = self.p
        change_mbps = p.theta0 * self.amplifier(self.tau) * gamma
        rate_mbps = self.mbps(self.rate)
        ratio = abs(change_mbps) / rate_mbps if rate_mbps > 0 else 0.0
        omega = self.boundary()
        if ratio > omega:
            change_mbps = math.copysign(omega * rate_mbps, change_mbps)
            self.k += 1
        elif p.delta > 0:
            self.k = max(0, math.ceil((ratio - p.omega0) / p.delta - 1e-9))
        return change_mbps * MBIT / 8

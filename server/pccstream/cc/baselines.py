"""The baseline controllers of the comparison (BBR and the contest's schemes), declared for
the registry: name, description, parameter dataclass and constructor.

Kept apart from registry.py so adding a baseline touches only this file.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .aimd import Aimd, AimdParams
from .base import Controller
from .bbr import Bbr, BbrParams
from .delay_threshold import DelayThreshold, DelayThresholdParams
from .ewma_bdp import EwmaBdp, EwmaBdpParams
from .fixed_rate import FixedRate, FixedRateParams
from .fixed_window import FixedWindow, FixedWindowParams
from .remy import Remy, RemyParams
from .rocinante import Rocinante, RocinanteParams
from .sprout import Sprout, SproutParams
from .sprout_ewma import SproutEwma, SproutEwmaParams


@dataclass(frozen=True)
class Baseline:
    name: str
    description: str
    params: type
    build: Callable[[Any, random.Random], Controller]  # (params instance, rng)

    def create(self, values: dict[str, Any], rng: random.Random) -> Controller:
        return self.build(self.params(**values), rng)


BASELINES: list[Baseline] = [
    Baseline("bbr", "BBR v1 (draft-cardwell-iccrg-bbr-00, Linux tcp_bbr constants)",
             BbrParams, lambda p, rng: Bbr(p, rng)),
    Baseline("fixed", "contest: fixed window (15 packets)",
             FixedWindowParams, lambda p, rng: FixedWindow(p)),
    Baseline("fixed-rate", "reference: one constant pacing rate (rate_mbps), window 2 x its BDP",
             FixedRateParams, lambda p, rng: FixedRate(p)),
    Baseline("aimd", "contest: AIMD, +1 packet/RTT, x1/2 on a timeout (loss, PTO, late ACK)",
             AimdParams, lambda p, rng: Aimd(p)),
    Baseline("delay-threshold", "contest: AIAD around a 90 ms RTT threshold (+1/-10 per RTT)",
             DelayThresholdParams, lambda p, rng: DelayThreshold(p)),
    Baseline("rocinante", "contest: delay AIAD, EWMA RTT (0.01) vs 1.4 x min RTT (+2/-5 per RTT)",
             RocinanteParams, lambda p, rng: Rocinante(p)),
    Baseline("ewma-bdp", "contest: window = 1.25 x EWMA receive rate x min RTT, bounded",
             EwmaBdpParams, lambda p, rng: EwmaBdp(p)),
    Baseline("sprout", "Sprout: Bayesian rate filter, window = 5th-percentile forecast of "
             "deliveries within 100 ms (+ min RTT)", SproutParams, lambda p, rng: Sprout(p)),
    Baseline("sprout-ewma", "Sprout-EWMA: window = EWMA delivery rate x (100 ms + min RTT)",
             SproutEwmaParams, lambda p, rng: SproutEwma(p)),
    Baseline("remy", "RemyCC rule table (Remy, SIGCOMM 2013), table=NAME",
             RemyParams, lambda p, rng: Remy(p)),
]

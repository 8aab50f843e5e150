"""Controllers by name, with per-session parameters parsed from URL strings.

    create_controller("vivace", {"b": "0", "c": "20"}, seed=7)

The PCC family and aioquic's window controllers are declared in `_CONTROLLERS` below, the
baselines in baselines.py; `list_controllers()` gives them all. Every parameter can be
overridden per session; unknown names, unknown parameters and bad values raise UserError
naming the valid choices.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UserError
from .allegro import Allegro, AllegroParams
from .base import Controller
from .baselines import BASELINES
from .params import ParamInfo, param_infos, parse_value
from .vivace import Vivace, VivaceParams
from .window import WindowController

DEFAULT_CONTROLLER = "vivace"


@dataclass(frozen=True)
class ControllerInfo:
    name: str
    description: str
    params: list[ParamInfo]
    _build: Callable[[dict[str, Any], random.Random], Controller]

    def help(self) -> str:
        lines = [f"{self.name}: {self.description}"]
        lines += [f"    {p.describe()}" for p in self.params]
        return "\n".join(lines)


def _vivace(overrides: dict[str, Any], name: str) -> Callable[[dict[str, Any], random.Random],
                                                            Controller]:
    def build(values: dict[str, Any], rng: random.Random) -> Controller:
        ctrl = Vivace(VivaceParams(**{**overrides, **values}), rng)
        ctrl.name = name
        return ctrl
    return build


def _allegro(overrides: dict[str, Any], name: str) -> Callable[[dict[str, Any], random.Random],
                                                             Controller]:
    def build(values: dict[str, Any], rng: random.Random) -> Controller:
        merged = {**overrides, **values}
        if merged.get("epsilon_max", 0.05) < merged.get("epsilon_min", 0.01):
            raise UserError(f"controller {name!r}: epsilon_max must be >= epsilon_min")
        ctrl = Allegro(AllegroParams(**merged), rng)
        ctrl.name = name
        return ctrl
    return build


def _window(name: str) -> Callable[[dict[str, Any], random.Random], Controller]:
    return lambda values, rng: WindowController(name)


def _pcc(name: str, description: str, cls: type, overrides: dict[str, Any],
         factory: Callable[[dict[str, Any], str], Callable[[dict[str, Any], random.Random],
                                                         Controller]]) -> ControllerInfo:
    return ControllerInfo(name, description, param_infos(cls, overrides),
                          factory(overrides, name))


_CONTROLLERS: dict[str, ControllerInfo] = {
    info.name: info
    for info in [
        # Probes at +-2 % (PCC-Uspace's rate control) rather than the thesis's 5 %: the
        # rate settles about eps below capacity, and at 1.1 x the video bitrate the thesis's
        # video experiment has 9 % to spare (docs/cc.md, "Session 4"). Overflow loss behind
        # a standing queue is not pooled: its difference is the flow's own share, which
        # makes flows sharing a shallow queue converge (docs/cc.md, "Session 20"). An MI
        # that lost a fifth of its packets and delivered well under its rate cuts the rate
        # to what it delivered: far above capacity the utility's pairs are decided by the
        # loss rate's noise (docs/cc.md, "Session 22"). A step up sends one MI at the new
        # rate until its result: the MIs already in flight behind it queued its excess on a
        # shallow queue (docs/cc.md, session 36). A decrease stands and increases do not
        # grow with the rate (AIMD, Chiu and Jain): with both a share of the rate, viewers
        # sharing a queue kept the unequal rates they left slow start at (docs/cc.md,
        # sessions 33 and 38). A flow far below its share may still step up by 5 packets a
        # round trip, however small omega x rate is, and slow start ends on latency only on a
        # queue that stands HyStart's threshold above the min RTT: three viewers sharing a
        # 75 kB queue left one of them at 1-3 Mbit/s, where a step of omega x rate is under a
        # packet per round trip (docs/cc.md, sessions 55 and 56). The RTT gradient's noise
        # test allows for residuals that move together: a browser host's stalls delay runs
        # of ACKs, and counted as independent samples they passed as a rising queue and
        # idled the link at 50 Mbit/s (docs/cc.md, sessions 61 and 62).
        # `vivace-loss` keeps pooling: with no latency term it stands on its own queue, where
        # random loss looks the same.
        _pcc("vivace", "PCC Vivace, latency-aware utility (t=0.9, b=900, c=11.35, eps=0.02)",
             VivaceParams, {"epsilon": 0.02, "loss_pool_queue": True, "overload_loss": 0.2,
                            "hold_untested_increase": True, "moving_after_decrease": False,
                            "theta_increase_power": 0.0, "theta0": 0.45,
                            "increase_boundary_floor_packets": 5.0, "ss_exit_min_queue": True,
                            "rtt_gradient_autocorr": True},
             _vivace),
        _pcc("vivace-loss", "PCC Vivace, loss-only utility (b=0, eps=0.02)",
             VivaceParams, {"b": 0.0, "epsilon": 0.02}, _vivace),
        # Cellular: the window is bounded by receive rate x min RTT plus room for data
        # delivered that the ACK path has not reported yet: the larger of a quarter of that
        # (room to grow) and the largest recent ACK clump (up to a BDP, what an uplink that
        # releases ACKs once per min RTT needs). A cellular link's capacity swings within an
        # RTT, faster than probe pairs can measure; the rate the receiver takes data at
        # follows within an RTT, so the bound holds the queue to that room, within BBR's
        # 2 x BDP window (the aim: at most half of BBR's delay). With that bound an outage
        # stops sending by itself, so MI timeouts (thesis 4.5.1) would only cut the rate the
        # capacity comes back to; and no overshoot reuse, because capacity swings raise the
        # RTT gradient without any overshoot. A shaped uplink holds ACKs for seconds: its
        # gaps stay out of the receive rate (docs/cc.md, "Cellular profile", session 35).
        # While it holds them the downlink may still deliver: the bound grows by a share of
        # the receive rate through an ACK silence, scaled by how many past silences turned
        # out to be held ACKs rather than outages (session 47): a release that brings back
        # what was sent into the silence, followed by a packet that did not wait behind it
        # (session 48).
        _pcc("vivace-lte", "PCC Vivace, cellular profile: window <= receive rate x min RTT "
             "+ the larger of a quarter of that and the ACK clump, growing through ACK "
             "silences; no MI timeouts, no overshoot reuse", VivaceParams,
             {"bdp_cap_gain": 1.25, "mi_timeout_rtts": 0.0, "reuse_overshoot": False,
              "timeout_undo": False, "receive_outage_gap": 4.0,
              "bdp_cap_ack_aggregation": True, "bdp_cap_shared_margin": True,
              "bdp_cap_clump_bdps": 1.0, "bdp_cap_hold_gain": 0.25,
              "bdp_cap_hold_learn": 0.25, "bdp_cap_hold_queue_rtts": 4.0},
             _vivace),
        _pcc("allegro", "PCC Allegro, sigmoid loss utility (thesis 2.3)",
             AllegroParams, {}, _allegro),
        _pcc("allegro-latency", "PCC Allegro, latency-aware utility (thesis 3.3)",
             AllegroParams, {"latency": True}, _allegro),
        ControllerInfo("cubic", "aioquic's Cubic (window-based, paced at cwnd/srtt)", [],
                       _window("cubic")),
        ControllerInfo("reno", "aioquic's NewReno (window-based, paced at cwnd/srtt)", [],
                       _window("reno")),
    ]
}

# The baselines (BBR, the contest's schemes) are declared in baselines.py.
for _baseline in BASELINES:
    _CONTROLLERS[_baseline.name] = ControllerInfo(
        _baseline.name, _baseline.description, param_infos(_baseline.params), _baseline.create)


def list_controllers() -> list[ControllerInfo]:
    """Every controller with its parameters (for help text)."""
    return list(_CONTROLLERS.values())


def controller_help() -> str:
    return "\n".join(info.help() for info in _CONTROLLERS.values())


def parse_params(name: str, params: Mapping[str, str]) -> dict[str, Any]:
    """Validate `params` for controller `name`; returns typed values. Raises UserError."""
    info = _lookup(name)
    by_name = {p.name: p for p in info.params}
    values: dict[str, Any] = {}
    for key, text in params.items():
        spec = by_name.get(key)
        if spec is None:
            valid = ", ".join(sorted(by_name)) or "none"
            raise UserError(
                f"controller {name!r} has no parameter {key!r}; valid parameters: {valid}")
        try:
            values[key] = parse_value(spec, text)
        except ValueError as exc:
            raise UserError(f"controller {name!r}: {exc}") from None
    return values


def split_cc_spec(spec: str) -> tuple[str, dict[str, str]]:
    """`NAME[:KEY=VALUE...]` (e.g. `remy:table=2014-100x`, as in `pccstream ab --arms`) as
    the name and its parameters. Raises UserError naming a malformed or repeated pair."""
    name, *pairs = spec.strip().split(":")
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"cc={spec!r}: parameter {pair!r} is not KEY=VALUE")
        if key in params:
            raise UserError(f"cc={spec!r}: parameter {key!r} given twice")
        params[key] = value
    return name, params


def check_cc_spec(spec: str) -> tuple[str, dict[str, str]]:
    """`split_cc_spec`, then the name and every parameter checked against the registry, so a
    command line fails on a bad arm before it runs anything. Raises UserError."""
    name, params = split_cc_spec(spec)
    parse_params(name, params)
    return name, params


def create_controller(name: str, params: Mapping[str, str] | None = None, *,
                      seed: int | None = None) -> Controller:
    """A fresh controller `name` with per-session `params` (strings, e.g. from the URL).

    `seed` fixes the algorithm's randomness (probe order); None draws a random seed.
    """
    info = _lookup(name)
    values = parse_params(name, params or {})
    rng = random.Random(seed)
    try:
        return info._build(values, rng)
    except (TypeError, ValueError) as exc:
        raise UserError(f"controller {name!r}: {exc}") from None


def _lookup(name: str) -> ControllerInfo:
    info = _CONTROLLERS.get(name)
    if info is None:
        valid = ", ".join(_CONTROLLERS)
        raise UserError(f"unknown congestion controller {name!r}; valid controllers: {valid}")
    return info


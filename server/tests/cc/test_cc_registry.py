"""Registry: names, per-session parameters, errors."""

from __future__ import annotations

import pytest

from pccstream.cc import create_controller, list_controllers
from pccstream.cc.allegro import Allegro
from pccstream.cc.registry import DEFAULT_CONTROLLER, controller_help, parse_params
from pccstream.cc.vivace import Vivace
from pccstream.cc.window import WindowController
from pccstream.errors import UserError

REQUIRED = {"vivace", "vivace-loss", "vivace-lte", "allegro", "allegro-latency", "cubic",
            "reno"}


def test_names_and_help() -> None:
    names = {info.name for info in list_controllers()}
    assert names >= REQUIRED and DEFAULT_CONTROLLER in names
    text = controller_help()
    assert all(name in text for name in REQUIRED) and "mi_timeout_rtts" in text


def test_variants_defaults() -> None:
    v = create_controller("vivace", seed=1)
    assert isinstance(v, Vivace) and (v.p.t, v.p.b, v.p.c) == (0.9, 900.0, 11.35)
    assert v.p.epsilon == 0.02 and v.p.mi_timeout_rtts == 5.0
    loss = create_controller("vivace-loss")
    assert isinstance(loss, Vivace) and loss.p.b == 0.0 and loss.name == "vivace-loss"
    assert loss.p.epsilon == 0.02
    lte = create_controller("vivace-lte")
    assert isinstance(lte, Vivace) and lte.p.mi_timeout_rtts == 0.0 and lte.p.epsilon == 0.05
    assert lte.p.bdp_cap_gain == 1.25 and v.p.bdp_cap_gain == 0.0
    assert lte.p.bdp_cap_shared_margin and lte.p.bdp_cap_clump_bdps == 1.0
    assert not v.p.bdp_cap_shared_margin and v.p.bdp_cap_clump_bdps == 0.5
    assert not lte.p.reuse_overshoot and v.p.reuse_overshoot and v.p.early_reverse
    assert not lte.p.timeout_undo and v.p.timeout_undo
    assert v.p.loss_confidence == 1.0
    assert v.p.loss_pool_queue and not loss.p.loss_pool_queue and not lte.p.loss_pool_queue
    assert v.p.overload_loss == 0.2 and loss.p.overload_loss == 0 and lte.p.overload_loss == 0
    assert v.p.hold_untested_increase
    assert not loss.p.hold_untested_increase and not lte.p.hold_untested_increase
    # AIMD above 12 Mbit/s in `vivace` only: a decrease stands, increases do not scale.
    assert (v.p.moving_after_decrease, v.p.theta_increase_power, v.p.theta0) == (
        False, 0.0, 0.45)
    for other in (loss, lte):
        assert (other.p.moving_after_decrease, other.p.theta_increase_power,
                other.p.theta0) == (True, 1.0, 0.3)
    # Small flows climb by packets, and slow start's latency exits need a standing queue.
    assert (v.p.increase_boundary_floor_packets, v.p.ss_exit_min_queue) == (5.0, True)
    for other in (loss, lte):
        assert (other.p.increase_boundary_floor_packets, other.p.ss_exit_min_queue) == (
            0.0, False)
    # The gradient's noise test allows for residuals that move together (session 62).
    assert v.p.rtt_gradient_autocorr
    assert not loss.p.rtt_gradient_autocorr and not lte.p.rtt_gradient_autocorr
    a = create_controller("allegro-latency")
    assert isinstance(a, Allegro) and a.p.latency
    assert isinstance(create_controller("cubic"), WindowController)


def test_per_session_parameters() -> None:
    v = create_controller("vivace", {"t": "0.8", "b": "0", "c": "20", "epsilon": "0.03",
                                     "mi_timeout_rtts": "3", "double_check": "off"}, seed=1)
    assert isinstance(v, Vivace)
    assert (v.p.t, v.p.b, v.p.c, v.p.epsilon, v.p.mi_timeout_rtts) == (0.8, 0, 20, 0.03, 3)
    assert v.p.double_check is False
    # Session parameters override a variant's own defaults.
    lte = create_controller("vivace-lte", {"mi_timeout_rtts": "4"})
    assert isinstance(lte, Vivace) and lte.p.mi_timeout_rtts == 4.0
    a = create_controller("allegro", {"epsilon_min": "0.02", "epsilon_max": "0.1"})
    assert isinstance(a, Allegro) and a.epsilon == 0.02


def test_seed_makes_probe_order_reproducible() -> None:
    def order(seed: int) -> list[bool]:
        v = create_controller("vivace", seed=seed)
        assert isinstance(v, Vivace)
        out = []
        for _ in range(16):
            v._enter_probing()
            out.append(v._probe_rates[0] > v._probe_rates[1])
        return out
    assert order(3) == order(3)
    assert order(3) != order(4)


def test_unknown_controller_lists_valid_ones() -> None:
    with pytest.raises(UserError) as err:
        create_controller("vivce")
    assert "'vivce'" in str(err.value)
    assert all(name in str(err.value) for name in REQUIRED)


@pytest.mark.parametrize(("name", "params", "fragment"), [
    ("vivace", {"tt": "1"}, "no parameter 'tt'; valid parameters: "),
    ("vivace", {"t": "abc"}, "t='abc' is not a number"),
    ("vivace", {"t": "1.5"}, "out of range"),
    ("vivace", {"c": "nan"}, "must be finite"),
    ("vivace", {"min_mi_packets": "2.5"}, "not an integer"),
    ("vivace", {"double_check": "maybe"}, "not a boolean"),
    ("cubic", {"t": "0.9"}, "valid parameters: none"),
    ("allegro", {"epsilon_min": "0.1", "epsilon_max": "0.05"}, "epsilon_max"),
])
def test_bad_parameters(name: str, params: dict[str, str], fragment: str) -> None:
    with pytest.raises(UserError) as err:
        create_controller(name, params)
    assert fragment in str(err.value) and repr(name) in str(err.value)


def test_parse_params_types() -> None:
    assert parse_params("vivace", {"min_mi_packets": "12", "b": "1e3"}) == {
        "min_mi_packets": 12, "b": 1000.0}

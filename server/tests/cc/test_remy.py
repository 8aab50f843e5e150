"""RemyCC executor: table parsing and validation, rule lookups in every shipped table
(checked against a brute-force scan of the raw protobuf leaves), actions, bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pccstream.cc.registry import create_controller
from pccstream.cc.remy import (
    TABLES,
    Remy,
    RemyParams,
    load_table,
    load_table_file,
    shipped_table,
)
from pccstream.cc.remy_dna import AXES, WhiskerTreeMessage
from pccstream.cc.sim import SimPacket
from pccstream.errors import UserError
from pccstream.paths import PACKAGE_DIR

TABLES_DIR = PACKAGE_DIR / "cc" / "remy_tables"

# (rec_send_ewma, rec_rec_ewma, rtt_ratio, slow_rec_rec_ewma, rtt_diff, queueing_delay), ms
MEMORIES = {
    "slow": (5.0, 5.0, 1.05, 5.0, 1.0, 5.0),
    "queue": (1.0, 2.0, 2.5, 2.0, 50.0, 20.0),
    "fast": (0.2, 0.2, 1.0, 0.2, 0.0, 0.2),
}

# Hand-picked memories and the rule each table fires: (leaf index, increment, multiple,
# intersend ms).
EXPECTED = {
    ("2013-delta0.1", "slow"): (125, 10, 0.35, 5.9695),
    ("2013-delta0.1", "queue"): (101, 10, 0.95, 1.0695),
    ("2013-delta0.1", "fast"): (7, 10, 0.9698, 7.7199),
    ("2013-delta1", "slow"): (142, 10, 0.6997, 3.6992),
    ("2013-delta1", "queue"): (101, 10, 0.2799, 7.4994),
    ("2013-delta1", "fast"): (0, 10, 0.9898, 7.9897),
    ("2013-delta10", "slow"): (184, 10, 0.2796, 7.6998),
    ("2013-delta10", "queue"): (86, 10, 0.1097, 3.8595),
    ("2013-delta10", "fast"): (2, 10, 0.6998, 7.7296),
    ("2014-100x", "slow"): (73, 52, 0.1199, 2.2365),
    ("2014-100x", "queue"): (78, 39, 0.49, 3.5894),
    ("2014-100x", "fast"): (15, 165, 0.92, 0.1112),
}


def _raw_rule(message: Any, memory: tuple[float, ...]) -> tuple[int, float, float] | None:
    """The first leaf, depth first, whose own whisker domain (field 34) holds `memory`."""
    def holds(domain: Any) -> bool:
        axes = list(domain.active_axis) or [0, 1, 2, 3]
        for axis in axes:
            name = AXES[axis]
            lo = getattr(domain.lower, name) if domain.lower.HasField(name) else 0.0
            hi = getattr(domain.upper, name) if domain.upper.HasField(name) else 163840.0
            if not lo <= memory[axis] < hi:
                return False
        return True

    if message.HasField("leaf"):
        leaf = message.leaf
        if holds(leaf.domain):
            return leaf.window_increment, leaf.window_multiple, leaf.intersend
        return None
    for child in message.children:
        found = _raw_rule(child, memory)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("table", list(TABLES))
@pytest.mark.parametrize("memory", list(MEMORIES))
def test_lookup_matches_hand_picked_rule_and_raw_leaves(table: str, memory: str) -> None:
    rule = shipped_table(table).lookup(MEMORIES[memory])
    assert rule is not None
    index, increment, multiple, intersend = EXPECTED[(table, memory)]
    assert (rule.index, rule.window_increment) == (index, increment)
    assert rule.window_multiple == pytest.approx(multiple, abs=1e-6)
    assert rule.intersend_ms == pytest.approx(intersend, abs=1e-6)
    raw = WhiskerTreeMessage()
    raw.ParseFromString((TABLES_DIR / TABLES[table]).read_bytes())
    assert _raw_rule(raw, MEMORIES[memory]) == pytest.approx(
        (rule.window_increment, rule.window_multiple, rule.intersend_ms))


def test_lookup_bounds_are_lower_inclusive_upper_exclusive() -> None:
    table = _one_rule_table(2, 1.0, 1.0, upper_rtt_ratio=2.0)
    assert table.lookup((0.0, 0.0, 0.0, 0.0, 0.0, 0.0)) is not None
    assert table.lookup((0.0, 0.0, 1.999, 0.0, 0.0, 0.0)) is not None
    assert table.lookup((0.0, 0.0, 2.0, 0.0, 0.0, 0.0)) is None


def _one_rule_table(increment: int, multiple: float, intersend: float, *,
                    upper_rtt_ratio: float = 100.0):  # noqa: ANN202 - RemyTable
    tree = WhiskerTreeMessage()
    tree.domain.upper.rtt_ratio = upper_rtt_ratio
    tree.leaf.window_increment = increment
    tree.leaf.window_multiple = multiple
    tree.leaf.intersend = intersend
    tree.leaf.domain.CopyFrom(tree.domain)
    return load_table(tree.SerializeToString(), "synthetic")


def _ack(ctrl: Remy, pn: int, sent: float, now: float) -> None:
    packet = SimPacket(pn, sent, 1200, 0)
    ctrl.on_packet_sent(sent, packet)
    ctrl.on_packet_acked(now, packet)


def test_actions_window_multiple_increment_and_intersend() -> None:
    ctrl = Remy(table=_one_rule_table(3, 0.5, 4.0))
    ctrl.bind(max_datagram_size=1200, now=0.0)
    # The initial rule fires on a window of 0: 0 x 0.5 + 3.
    assert ctrl.window == 3
    assert ctrl.congestion_window == 3 * 1200
    assert ctrl.pacing_rate == pytest.approx(1200 / 0.004)  # one datagram per 4 ms
    _ack(ctrl, 0, 0.0, 0.05)
    assert ctrl.window == int(3 * 0.5 + 3)  # 4
    _ack(ctrl, 1, 0.001, 0.052)
    assert ctrl.window == int(4 * 0.5 + 3)  # 5


def test_window_clamped_at_zero_and_one_packet_kept() -> None:
    ctrl = Remy(table=_one_rule_table(-5, 1.0, 0.0))
    ctrl.bind(max_datagram_size=1200, now=0.0)
    assert ctrl.window == 0
    assert ctrl.congestion_window == 1200
    assert ctrl.pacing_rate is None  # intersend 0: no minimum gap


def test_memory_follows_remys_definitions() -> None:
    ctrl = Remy(table=_one_rule_table(1, 1.0, 1.0))
    ctrl.bind(max_datagram_size=1200, now=0.0)
    events: list[dict[str, Any]] = []
    ctrl.event_sink = events.append
    _ack(ctrl, 0, 0.000, 0.040)  # first ACK: sets the references, min RTT 40 ms
    _ack(ctrl, 1, 0.010, 0.065)  # sent 10 ms later, acked 25 ms later, RTT 55 ms
    m = ctrl.memory
    assert m.rec_send_ewma == pytest.approx(10 / 8)
    assert m.rec_rec_ewma == pytest.approx(25 / 8)
    assert m.slow_rec_rec_ewma == pytest.approx(25 / 256)
    assert m.rtt_ratio == pytest.approx(55 / 40)
    assert m.rtt_diff == pytest.approx(15)
    assert m.queueing_delay == pytest.approx(25 / 8 * 1)
    # One event per 20 ms at most: the first ACK's and this one's.
    assert [e["type"] for e in events] == ["remy", "remy"]
    assert events[-1]["rule"] == 0
    assert events[-1]["rtt_ratio"] == pytest.approx(55 / 40)


def test_registry_selects_table_per_session() -> None:
    ctrl = create_controller("remy", {"table": "2014-100x"})
    assert isinstance(ctrl, Remy) and ctrl.table is shipped_table("2014-100x")
    default = create_controller("remy")
    assert isinstance(default, Remy) and default.params == RemyParams()


def test_unknown_table_name_is_one_clear_error() -> None:
    with pytest.raises(UserError, match=r"table='nope'.*valid tables: 2013-delta0.1"):
        create_controller("remy", {"table": "nope"})


@pytest.mark.parametrize("data", [b"\xff\xff\xff garbage", b"\x0a\x05\x0a"])
def test_corrupt_table_names_the_file(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "broken.dna"
    path.write_bytes(data)
    with pytest.raises(UserError, match=r"broken\.dna: not a RemyCC WhiskerTree"):
        load_table_file(path)


def test_structurally_wrong_table_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "empty.dna"
    path.write_bytes(b"")  # a valid, empty message: no domain, no rule
    with pytest.raises(UserError, match=r"empty\.dna: a node without a domain"):
        load_table_file(path)
    tree = WhiskerTreeMessage()
    tree.domain.upper.rtt_ratio = 10.0
    tree.leaf.window_multiple = float("nan")
    with pytest.raises(UserError, match="rule 0 has a non-finite window multiple"):
        load_table(tree.SerializeToString(), "nan.dna")


def test_missing_table_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"absent\.dna: cannot read"):
        load_table_file(tmp_path / "absent.dna")

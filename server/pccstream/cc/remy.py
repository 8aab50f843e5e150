"""`remy`: an executor for RemyCC rule tables (Winstein & Balakrishnan, SIGCOMM 2013).

A RemyCC is a tree of rules ("whiskers") over the sender's memory, all times in ms:
`rec_send_ewma` and `rec_rec_ewma`, EWMAs (gain 1/8) of the intervals between the send
times and between the ACK times of successively acknowledged packets, `slow_rec_rec_ewma`
(gain 1/256), `rtt_ratio` = latest RTT / min RTT, `rtt_diff` = latest - min RTT, and
`queueing_delay` = rec_rec_ewma x packets outstanding. After every acknowledged packet the
memory is updated, the leaf whose domain holds it (lower bound inclusive, upper exclusive,
on the domain's active axes) fires, and its action is applied: window <- multiple x window +
increment (packets, within [0, 1e6]) and at least `intersend` ms between sends.

On QUIC: one ACK frame usually acknowledges several packets; each counts as one of Remy's
ACKs, so a frame of two applies the rule twice, as two back-to-back ACKs would in Remy's
simulator. The ACK times are the sender's (ACK delay included, as Remy's receiver had none)
and the intersend becomes the pacing rate, one datagram per intersend.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError

from ..errors import UserError
from .base import Controller, SentPacket
from .params import param
from .remy_dna import AXES, WhiskerTreeMessage

TABLES_PACKAGE = "pccstream.cc.remy_tables"
# Table name -> file in remy_tables/ (see its README.md for the provenance).
TABLES = {
    "2013-delta0.1": "RemyCC-2013-delta0.1.dna",
    "2013-delta1": "RemyCC-2013-delta1.dna",
    "2013-delta10": "RemyCC-2013-delta10.dna",
    "2014-100x": "RemyCC-2014-100x.dna",
}
# Best power on the contest trace (Verizon-LTE-short + 20 ms) on the link model: see
# docs/baselines.md, "remy".
DEFAULT_TABLE = "2013-delta1"

EWMA_GAIN = 1 / 8
SLOW_EWMA_GAIN = 1 / 256
MAX_WINDOW_PACKETS = 1_000_000
# What Remy puts in a bound the table leaves out: 0 below, this above (memory.cc).
UNBOUNDED = 163840.0
# Telemetry: the rule fires on every ACK; one event at most this often (s).
EVENT_INTERVAL_S = 0.02
# Tables written before `active_axis` existed use these four axes (memoryrange.cc).
LEGACY_AXES = (0, 1, 2, 3)


@dataclass(frozen=True)
class RemyParams:
    table: str = param(DEFAULT_TABLE, "rule table: " + ", ".join(TABLES))


@dataclass(frozen=True, slots=True)
class Rule:
    index: int  # position among the table's leaves, depth first (telemetry)
    window_increment: int
    window_multiple: float
    intersend_ms: float


@dataclass(frozen=True, slots=True)
class Node:
    axes: tuple[int, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    rule: Rule | None
    children: tuple[Node, ...] = field(default=())

    def contains(self, memory: tuple[float, ...]) -> bool:
        return all(self.lower[a] <= memory[a] < self.upper[a] for a in self.axes)


class RemyTable:
    """A parsed, validated rule tree."""

    def __init__(self, root: Node, source: str) -> None:
        self.root = root
        self.source = source

    def lookup(self, memory: tuple[float, ...]) -> Rule | None:
        """The rule whose domain holds `memory` (None: outside the table's domain)."""
        node = self.root
        if not node.contains(memory):
            return None
        while node.rule is None:
            node = next((c for c in node.children if c.contains(memory)), None)  # type: ignore[assignment]
            if node is None:
                return None
        return node.rule


def load_table(data: bytes, source: str) -> RemyTable:
    """Parse and validate a serialized WhiskerTree; UserError names `source` otherwise."""
    message = WhiskerTreeMessage()
    try:
        message.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise UserError(f"remy table {source}: not a RemyCC WhiskerTree ({exc})") from None
    leaves: list[Rule] = []

    def build(tree: Any, depth: int) -> Node:
        has_leaf = tree.HasField("leaf")
        if has_leaf == bool(tree.children) or not tree.HasField("domain") or depth > 64:
            raise UserError(f"remy table {source}: a node without a domain, or with both or "
                            f"neither of a rule and children (not a RemyCC WhiskerTree)")
        domain = tree.domain
        axes = tuple(domain.active_axis) or LEGACY_AXES
        lower = tuple(getattr(domain.lower, a) if domain.lower.HasField(a) else 0.0
                      for a in AXES)
        upper = tuple(getattr(domain.upper, a) if domain.upper.HasField(a) else UNBOUNDED
                      for a in AXES)
        rule = None
        if has_leaf:
            leaf = tree.leaf
            if not (math.isfinite(leaf.window_multiple) and math.isfinite(leaf.intersend)
                    and leaf.intersend >= 0):
                raise UserError(f"remy table {source}: rule {len(leaves)} has a non-finite "
                                f"window multiple or a bad intersend")
            rule = Rule(len(leaves), leaf.window_increment, leaf.window_multiple,
                        leaf.intersend)
            leaves.append(rule)
        children = tuple(build(c, depth + 1) for c in tree.children)
        return Node(axes, lower, upper, rule, children)

    root = build(message, 0)
    return RemyTable(root, source)


def load_table_file(path: Path) -> RemyTable:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"remy table {path}: cannot read ({exc.strerror})") from None
    return load_table(data, str(path))


_SHIPPED: dict[str, RemyTable] = {}


def shipped_table(name: str) -> RemyTable:
    """One of the tables in remy_tables/, parsed once and validated."""
    if name not in TABLES:
        raise UserError(f"controller 'remy': table={name!r} is not a shipped RemyCC table; "
                        f"valid tables: {', '.join(TABLES)}")
    if name not in _SHIPPED:
        resource = resources.files(TABLES_PACKAGE) / TABLES[name]
        _SHIPPED[name] = load_table(resource.read_bytes(), f"{TABLES[name]} (table={name})")
    return _SHIPPED[name]


class RemyMemory:
    """The sender's memory, updated per acknowledged packet (cf. Remy's memory.cc)."""

    def __init__(self) -> None:
        self.rec_send_ewma = 0.0
        self.rec_rec_ewma = 0.0
        self.slow_rec_rec_ewma = 0.0
        self.rtt_ratio = 0.0
        self.rtt_diff = 0.0
        self.queueing_delay = 0.0
        self._last_sent_ms: float | None = None
        self._last_acked_ms = 0.0
        self._min_rtt_ms = math.inf

    def on_ack(self, sent_ms: float, acked_ms: float, outstanding_packets: int) -> None:
        rtt = acked_ms - sent_ms
        if self._last_sent_ms is None:
            self._min_rtt_ms = rtt
        else:
            send_gap = sent_ms - self._last_sent_ms
            ack_gap = acked_ms - self._last_acked_ms
            self.rec_send_ewma += EWMA_GAIN * (send_gap - self.rec_send_ewma)
            self.rec_rec_ewma += EWMA_GAIN * (ack_gap - self.rec_rec_ewma)
            self.slow_rec_rec_ewma += SLOW_EWMA_GAIN * (ack_gap - self.slow_rec_rec_ewma)
            self._min_rtt_ms = min(self._min_rtt_ms, rtt)
            self.rtt_ratio = rtt / self._min_rtt_ms if self._min_rtt_ms > 0 else 1.0
            self.rtt_diff = rtt - self._min_rtt_ms
            self.queueing_delay = self.rec_rec_ewma * outstanding_packets
        self._last_sent_ms = sent_ms
        self._last_acked_ms = acked_ms

    def as_tuple(self) -> tuple[float, ...]:
        return tuple(getattr(self, a) for a in AXES)


class Remy(Controller):
    name = "remy"
    is_rate_based = False

    def __init__(self, params: RemyParams | None = None, *,
                 table: RemyTable | None = None) -> None:
        """`table` replaces the shipped table `params.table` names (tests, other tables)."""
        super().__init__()
        self.params = params or RemyParams()
        self.table = table or shipped_table(self.params.table)
        self.memory = RemyMemory()
        self.window = 0.0  # packets
        self.intersend_ms = 0.0
        self.rule: Rule | None = None
        self._largest_acked = -1
        self._last_event = -math.inf
        self._apply(now=None)  # the initial window and intersend (Rat::send)

    def _apply(self, now: float | None) -> None:
        rule = self.table.lookup(self.memory.as_tuple())
        if rule is None:
            return  # outside the table: keep the last action (Remy aborts here)
        self.rule = rule
        window = int(self.window * rule.window_multiple + rule.window_increment)
        self.window = float(min(max(0, window), MAX_WINDOW_PACKETS))
        self.intersend_ms = rule.intersend_ms
        self.pacing_version += 1
        if now is not None and self.t0 is not None and now - self._last_event >= EVENT_INTERVAL_S:
            self._last_event = now
            self.emit({"type": "remy", "t_ms": (now - self.t0) * 1000, "rule": rule.index,
                       **{a: round(v, 4) for a, v in zip(AXES, self.memory.as_tuple(),
                                                         strict=True)},
                       "window_multiple": rule.window_multiple,
                       "window_increment": rule.window_increment,
                       "window_packets": self.window, "intersend_ms": self.intersend_ms})

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        super().on_packet_acked(now, packet)
        if packet.sent_time is None:
            return
        # Remy's "packets outstanding" (memory.cc): how far this ACK runs ahead of the
        # largest one before it, at least 1.
        outstanding = max(1, packet.packet_number - self._largest_acked)
        self._largest_acked = max(self._largest_acked, packet.packet_number)
        self.memory.on_ack(packet.sent_time * 1000, now * 1000, outstanding)
        self._apply(now)

    @property
    def congestion_window(self) -> int:
        # A window of 0 would stall the connection for good under QUIC (Remy's sender
        # simply waits for the next rule): keep one packet.
        return max(1, int(self.window)) * self.max_datagram_size

    @property
    def pacing_rate(self) -> float | None:
        if self.intersend_ms <= 0:
            return None  # no minimum gap: window-limited, paced at the window's rate
        return self.max_datagram_size / (self.intersend_ms / 1000)

    def log_data(self) -> dict[str, Any]:
        return {"window_packets": self.window, "intersend_ms": self.intersend_ms,
                "rule": -1 if self.rule is None else self.rule.index}

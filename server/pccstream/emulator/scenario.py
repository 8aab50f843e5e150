"""Scenario files: link settings per direction plus a timeline of changes, as data.

Format (TOML, or the same structure in JSON) is documented in infra/scenarios/README.md.
`load_scenario(name_or_path, params)` is the programmatic entry point; `Scenario.from_settings`
builds one from CLI-like flags.
"""

from __future__ import annotations

import ast
import heapq
import json
import math
import operator
import os
import random
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pccstream.emulator.loss import LossModel, parse_loss
from pccstream.emulator.queues import DropTailQueue, parse_queue
from pccstream.emulator.trace import Trace, constant_rate_trace, load_trace, parse_rate
from pccstream.errors import UserError
from pccstream.paths import SCENARIOS, TRACES, data_path

DIRECTIONS = ("down", "up")


def _infra_override() -> Path | None:
    """PCCSTREAM_INFRA_DIR: a directory with scenarios/ and traces/ to use instead."""
    env = os.environ.get("PCCSTREAM_INFRA_DIR")
    return Path(env) if env else None


def scenarios_dir() -> Path:
    override = _infra_override()
    return override / "scenarios" if override else data_path(SCENARIOS)


def traces_dir() -> Path:
    override = _infra_override()
    return override / "traces" if override else data_path(TRACES)


# --------------------------------------------------------------------------------------------
# Safe arithmetic on parameters ("1.1 * bitrate_kbps")

_OPS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def evaluate(expr: str, params: Mapping[str, float], where: str) -> float:
    """Evaluate + - * / ** and parentheses over numbers and parameter names; nothing else."""

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name):
            if node.id not in params:
                raise UserError(f"{where}: unknown parameter {node.id!r} in {expr!r}")
            return float(params[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.operand))
        raise UserError(f"{where}: {expr!r} is not simple arithmetic over parameters")

    try:
        return ev(ast.parse(expr, mode="eval"))
    except SyntaxError:
        raise UserError(f"{where}: cannot parse expression {expr!r}") from None
    except ZeroDivisionError:
        raise UserError(f"{where}: division by zero in {expr!r}") from None


# --------------------------------------------------------------------------------------------
# Model


@dataclass
class DirectionSpec:
    """Settings of one direction. `trace` wins over `rate_bps`; both None = unshaped."""

    rate_bps: float | None = None
    trace: Path | None = None
    delay_ms: float = 0.0
    loss: str | float | dict[str, Any] = 0.0
    queue: str = "infinite"

    def build_trace(self) -> Trace | None:
        if self.trace is not None:
            return load_trace(self.trace)
        if self.rate_bps is not None:
            return constant_rate_trace(self.rate_bps)
        return None

    def build_queue(self) -> DropTailQueue:
        return parse_queue(self.queue)

    def build_loss(self, rng: random.Random) -> LossModel:
        return parse_loss(self.loss, rng)


@dataclass
class Change:
    """One timeline event: at `at_s` seconds set the given fields of `directions`."""

    at_s: float
    directions: tuple[str, ...]
    rate_bps: float | None = None
    trace: Path | None = None
    delay_ms: float | None = None
    loss: float | str | dict[str, Any] | None = None

    def describe(self) -> str:
        parts = []
        if self.rate_bps is not None:
            parts.append(f"rate={self.rate_bps / 1e6:.4g}mbit")
        if self.trace is not None:
            parts.append(f"trace={self.trace.name}")
        if self.delay_ms is not None:
            parts.append(f"delay_ms={self.delay_ms:.4g}")
        if self.loss is not None:
            parts.append(f"loss={self.loss}")
        return f"t={self.at_s:g}s {'+'.join(self.directions)}: " + " ".join(parts)


# A timeline entry is either fixed (`at_s`) or periodic (`every_s`) with values that may be
# ranges [lo, hi] drawn uniformly from a seeded generator at each step.
Value = float | tuple[float, float]


@dataclass
class TimelineEntry:
    directions: tuple[str, ...]
    at_s: float | None = None
    every_s: float | None = None
    start_s: float = 0.0
    until_s: float | None = None
    rate_bps: Value | None = None
    delay_ms: Value | None = None
    loss: Value | str | dict[str, Any] | None = None
    trace: Path | None = None

    def changes(self, rng: random.Random) -> Iterator[Change]:
        def draw(v: Value | None) -> float | None:
            if v is None:
                return None
            if isinstance(v, tuple):
                return rng.uniform(v[0], v[1])
            return v

        def one(t: float) -> Change:
            loss = self.loss
            loss_v = draw(loss) if isinstance(loss, float | tuple) else loss
            return Change(t, self.directions, draw(self.rate_bps), self.trace,
                          draw(self.delay_ms), loss_v)

        if self.at_s is not None:
            yield one(self.at_s)
            return
        assert self.every_s is not None
        k = 0
        while True:
            t = self.start_s + k * self.every_s
            if self.until_s is not None and t > self.until_s:
                return
            yield one(t)
            k += 1


@dataclass
class Scenario:
    name: str
    description: str = ""
    # Named sets a benchmark can iterate over (`pccstream emulate scenarios --tag cellular`).
    tags: tuple[str, ...] = ()
    source: str = "<settings>"
    params: dict[str, float] = field(default_factory=dict)
    seed: int = 1
    down: DirectionSpec = field(default_factory=DirectionSpec)
    up: DirectionSpec = field(default_factory=DirectionSpec)
    timeline: list[TimelineEntry] = field(default_factory=list)

    def direction(self, name: str) -> DirectionSpec:
        return self.down if name == "down" else self.up

    def changes(self, seed: int | None = None) -> Iterator[Change]:
        """All timeline changes in time order (infinite if a periodic entry has no end).
        Each entry draws from its own generator seeded by (seed, entry index)."""
        s = self.seed if seed is None else seed
        iters = [
            e.changes(random.Random(f"{s}:timeline:{i}")) for i, e in enumerate(self.timeline)
        ]
        # heapq.merge is stable: at equal times the earlier entry in the file applies first.
        return heapq.merge(*iters, key=lambda c: c.at_s)

    @classmethod
    def from_settings(
        cls,
        *,
        down: str | None = None,
        up: str | None = None,
        delay_ms: float = 0.0,
        loss: str | float = 0.0,
        queue: str = "infinite",
        seed: int = 1,
        name: str = "settings",
    ) -> Scenario:
        """A scenario from CLI-like flags (rates like '12mbit' or trace paths)."""
        sc = cls(name=name, seed=seed)
        sc.apply_overrides(down=down, up=up, delay_ms=delay_ms, loss=loss, queue=queue)
        return sc

    def apply_overrides(
        self,
        *,
        down: str | None = None,
        up: str | None = None,
        delay_ms: float | None = None,
        loss: str | float | None = None,
        queue: str | None = None,
    ) -> None:
        """Flags given on the command line override the scenario's base settings."""
        if delay_ms is not None and (delay_ms < 0 or not math.isfinite(delay_ms)):
            raise UserError(f"--delay {delay_ms} ms is impossible: must be >= 0")
        if queue is not None:
            parse_queue(queue, "--queue")  # validate now, fail before sockets open
        if loss is not None:
            parse_loss(loss, random.Random(0), "--loss")
        for dname, spec in (("down", down), ("up", up)):
            d = self.direction(dname)
            if spec is not None:
                d.trace, d.rate_bps = _rate_or_trace(spec, f"--{dname}", Path.cwd())
            if delay_ms is not None:
                d.delay_ms = float(delay_ms)
            if loss is not None:
                d.loss = loss
            if queue is not None:
                d.queue = queue

    def summary(self) -> dict[str, Any]:
        def d(spec: DirectionSpec) -> dict[str, Any]:
            return {
                "rate_bps": spec.rate_bps,
                "trace": str(spec.trace) if spec.trace else None,
                "delay_ms": spec.delay_ms,
                "loss": spec.loss,
                "queue": spec.queue,
            }

        return {
            "name": self.name,
            "source": self.source,
            "params": self.params,
            "seed": self.seed,
            "down": d(self.down),
            "up": d(self.up),
            "timeline_entries": len(self.timeline),
        }


def _rate_or_trace(spec: str, where: str, base: Path) -> tuple[Path | None, float | None]:
    try:
        return None, parse_rate(spec, where)
    except UserError:
        pass
    for cand in (Path(spec), base / spec, traces_dir() / spec):
        if cand.is_file():
            load_trace(cand)  # validate early; errors name file and line
            return cand, None
    raise UserError(f"{where}: {spec!r} is neither a rate (e.g. 12mbit) nor a trace file")


# --------------------------------------------------------------------------------------------
# Loading


class _Locator:
    """Best-effort line numbers for semantic errors: finds `key =` (TOML) or `"key":` (JSON)
    inside the named table, so messages can say file:line."""

    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines()
        self.source = source

    def where(self, table: str | None, key: str | None, index: int = 0) -> str:
        line = self._find(table, key, index)
        return f"{self.source}:{line}" if line else self.source

    def _find(self, table: str | None, key: str | None, index: int) -> int | None:
        current: str | None = None
        seen = -1
        table_line: int | None = None
        for no, raw in enumerate(self.lines, start=1):
            s = raw.strip()
            m = re.match(r"^\[\[?\s*([A-Za-z0-9_.-]+)\s*\]\]?", s)
            if m:
                current = m.group(1)
                if current == table:
                    seen += 1
                    if seen == index:
                        table_line = no
                continue
            in_table = table is None and current is None or (current == table and seen == index)
            if (
                key
                and (in_table or self.source.endswith(".json"))
                and re.match(rf'^"?{re.escape(key)}"?\s*[=:]', s)
            ):
                return no
        return table_line


_KNOWN_TOP = {"name", "description", "tags", "seed", "params", "link", "down", "up",
              "timeline"}
_TAG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_KNOWN_DIR = {"rate", "rate_mbps", "rate_kbps", "trace", "delay_ms", "rtt_ms", "loss", "queue"}
_KNOWN_TL = {"at_s", "every_s", "start_s", "until_s", "direction", "rate", "rate_mbps",
             "rate_kbps", "trace", "delay_ms", "rtt_ms", "loss"}


def parse_name_and_params(name_or_path: str) -> tuple[str, dict[str, str]]:
    """'video-rttflap:bitrate_kbps=3000,x=1' -> ('video-rttflap', {...}). A path containing ':'
    that exists is taken as a path."""
    if ":" not in name_or_path or Path(name_or_path).exists():
        return name_or_path, {}
    base, _, rest = name_or_path.partition(":")
    params: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        k, eq, v = item.partition("=")
        if not eq:
            raise UserError(f"scenario {name_or_path!r}: parameter {item!r} needs key=value")
        params[k.strip()] = v.strip()
    return base, params


def resolve_scenario_path(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".toml", ".json") or os.sep in name_or_path:
        if not p.is_file():
            raise UserError(f"{p}: scenario file not found")
        return p
    for ext in (".toml", ".json"):
        cand = scenarios_dir() / f"{name_or_path}{ext}"
        if cand.is_file():
            return cand
    if p.is_file():
        return p
    known = ", ".join(list_scenarios()) or "none"
    raise UserError(f"unknown scenario {name_or_path!r} (known: {known}; or give a file path)")


def list_scenarios() -> list[str]:
    d = scenarios_dir()
    if not d.is_dir():
        return []
    return sorted(p.stem for p in d.iterdir() if p.suffix in (".toml", ".json"))


def load_scenario(
    name_or_path: str, params: Mapping[str, str | float] | None = None
) -> Scenario:
    """Load a scenario by name (infra/scenarios/NAME.toml) or path; `params` override the
    file's [params] defaults. 'name:key=value,...' is accepted as well."""
    name, inline = parse_name_and_params(name_or_path)
    merged: dict[str, str | float] = {**inline, **(params or {})}
    path = resolve_scenario_path(name)
    text = path.read_text(encoding="utf-8")
    source = str(path)
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        loc = f"{source}:{m.group(1)}" if m else source
        raise UserError(f"{loc}: invalid TOML: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{source}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise UserError(f"{source}: a scenario must be a table/object")
    return _build(data, _Locator(text, source), path, merged)


def _build(
    data: dict[str, Any], loc: _Locator, path: Path, given: Mapping[str, str | float]
) -> Scenario:
    for key in data:
        if key not in _KNOWN_TOP:
            raise UserError(f"{loc.where(None, key)}: unknown key {key!r} "
                            f"(allowed: {', '.join(sorted(_KNOWN_TOP))})")
    name = str(data.get("name", path.stem))
    raw_params = data.get("params", {})
    if not isinstance(raw_params, dict):
        raise UserError(f"{loc.where(None, 'params')}: [params] must be a table")
    params: dict[str, float] = {}
    for k, v in raw_params.items():
        if not isinstance(v, int | float) or isinstance(v, bool):
            raise UserError(f"{loc.where('params', k)}: parameter {k!r} must be a number")
        params[k] = float(v)
    for k, v in given.items():
        if k not in params:
            known = ", ".join(sorted(params)) or "none"
            raise UserError(f"scenario {name!r}: unknown parameter {k!r} (it takes: {known})")
        try:
            params[k] = float(v)
        except ValueError:
            raise UserError(f"scenario {name!r}: parameter {k}={v!r} is not a number") from None
    seed = data.get("seed", 1)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise UserError(f"{loc.where(None, 'seed')}: seed must be an integer")

    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(
        isinstance(t, str) and _TAG_RE.match(t) for t in tags
    ):
        raise UserError(f"{loc.where(None, 'tags')}: tags must be a list of lowercase words "
                        "(letters, digits, '-'), e.g. [\"cellular\"]")

    sc = Scenario(name=name, description=str(data.get("description", "")), tags=tuple(tags),
                  source=loc.source, params=params, seed=seed)
    link = data.get("link", {})
    for dname in DIRECTIONS:
        spec = DirectionSpec()
        for table in ("link", dname):
            section = link if table == "link" else data.get(dname, {})
            if not isinstance(section, dict):
                raise UserError(f"{loc.where(None, table)}: [{table}] must be a table")
            _apply_direction(spec, section, table, loc, path, params)
        if dname == "down":
            sc.down = spec
        else:
            sc.up = replace(spec)

    timeline = data.get("timeline", [])
    if not isinstance(timeline, list):
        raise UserError(f"{loc.where(None, 'timeline')}: timeline must be an array of tables")
    for i, entry in enumerate(timeline):
        sc.timeline.append(_timeline_entry(entry, i, loc, path, params))
    return sc


def _num(v: Any, params: Mapping[str, float], where: str) -> float:
    if isinstance(v, bool):
        raise UserError(f"{where}: expected a number, got {v!r}")
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        return evaluate(v, params, where)
    raise UserError(f"{where}: expected a number or arithmetic expression, got {v!r}")


def _value(v: Any, params: Mapping[str, float], where: str) -> Value:
    if isinstance(v, list):
        if len(v) != 2:
            raise UserError(f"{where}: a range must be [low, high]")
        lo, hi = _num(v[0], params, where), _num(v[1], params, where)
        if lo > hi:
            raise UserError(f"{where}: range [{lo:g}, {hi:g}] has low > high")
        return (lo, hi)
    return _num(v, params, where)


def _rate_value(key: str, v: Any, params: Mapping[str, float], where: str) -> Value:
    if key == "rate":
        if not isinstance(v, str):
            raise UserError(f"{where}: rate must be a string like '12mbit'")
        return parse_rate(v, where)
    scale = 1e6 if key == "rate_mbps" else 1e3
    val = _value(v, params, where)
    if isinstance(val, tuple):
        if val[0] <= 0:
            raise UserError(f"{where}: rate range must be positive")
        return (val[0] * scale, val[1] * scale)
    if val <= 0:
        raise UserError(f"{where}: rate {val:g} is impossible: must be positive")
    return val * scale


def _trace_path(v: Any, path: Path, where: str) -> Path:
    if not isinstance(v, str):
        raise UserError(f"{where}: trace must be a file name")
    for cand in (path.parent / v, traces_dir() / v, Path(v)):
        if cand.is_file():
            load_trace(cand)  # malformed traces are reported with their own file:line
            return cand
    raise UserError(f"{where}: trace {v!r} not found (looked next to the scenario and in "
                    f"{traces_dir()})")


def _check_loss(v: Any, where: str) -> float | str | dict[str, Any]:
    if isinstance(v, bool) or not isinstance(v, int | float | str | dict):
        raise UserError(f"{where}: loss must be a probability, 'N%', 'ge:...' or a table")
    if isinstance(v, dict) and str(v.get("model", "gilbert-elliott")) == "bernoulli":
        v = float(v.get("p", 0.0))
    parse_loss(v, random.Random(0), where)  # type: ignore[arg-type]
    return float(v) if isinstance(v, int | float) else v


def _apply_direction(spec: DirectionSpec, section: dict[str, Any], table: str, loc: _Locator,
                     path: Path, params: Mapping[str, float]) -> None:
    for key, v in section.items():
        where = loc.where(table, key)
        if key not in _KNOWN_DIR:
            raise UserError(f"{where}: unknown key {key!r} in [{table}] "
                            f"(allowed: {', '.join(sorted(_KNOWN_DIR))})")
        if key in ("rate", "rate_mbps", "rate_kbps"):
            r = _rate_value(key, v, params, where)
            if isinstance(r, tuple):
                raise UserError(f"{where}: ranges are only allowed in the timeline")
            spec.rate_bps, spec.trace = r, None
        elif key == "trace":
            spec.trace, spec.rate_bps = _trace_path(v, path, where), None
        elif key in ("delay_ms", "rtt_ms"):
            d = _num(v, params, where)
            if d < 0:
                raise UserError(f"{where}: {key} {d:g} is impossible: must be >= 0")
            spec.delay_ms = d / 2 if key == "rtt_ms" else d
        elif key == "loss":
            spec.loss = _check_loss(v, where)
        elif key == "queue":
            if isinstance(v, int | float) and not isinstance(v, bool):
                v = f"{v}pkts"
            if not isinstance(v, str):
                raise UserError(f"{where}: queue must be a string like '30pkts' or '45kB'")
            parse_queue(v, where)
            spec.queue = v


def _timeline_entry(entry: Any, i: int, loc: _Locator, path: Path,
                    params: Mapping[str, float]) -> TimelineEntry:
    here = loc.where("timeline", None, i)
    if not isinstance(entry, dict):
        raise UserError(f"{here}: each timeline entry must be a table")
    for key in entry:
        if key not in _KNOWN_TL:
            raise UserError(f"{loc.where('timeline', key, i)}: unknown timeline key {key!r} "
                            f"(allowed: {', '.join(sorted(_KNOWN_TL))})")
    d = entry.get("direction", "both")
    if d not in ("both", "down", "up"):
        raise UserError(f"{loc.where('timeline', 'direction', i)}: direction must be "
                        "both, down or up")
    te = TimelineEntry(directions=DIRECTIONS if d == "both" else (d,))
    if ("at_s" in entry) == ("every_s" in entry):
        raise UserError(f"{here}: a timeline entry needs exactly one of at_s or every_s")
    for key in ("at_s", "every_s", "start_s", "until_s"):
        if key in entry:
            val = _num(entry[key], params, loc.where("timeline", key, i))
            if val < 0 or (key == "every_s" and val <= 0):
                raise UserError(f"{loc.where('timeline', key, i)}: {key} {val:g} is impossible")
            setattr(te, key, val)
    for key, v in entry.items():
        where = loc.where("timeline", key, i)
        if key in ("rate", "rate_mbps", "rate_kbps"):
            te.rate_bps = _rate_value(key, v, params, where)
        elif key == "trace":
            te.trace = _trace_path(v, path, where)
        elif key in ("delay_ms", "rtt_ms"):
            val = _value(v, params, where)
            lo = val[0] if isinstance(val, tuple) else val
            if lo < 0:
                raise UserError(f"{where}: {key} must be >= 0")
            if key == "rtt_ms":
                val = (val[0] / 2, val[1] / 2) if isinstance(val, tuple) else val / 2
            te.delay_ms = val
        elif key == "loss":
            if isinstance(v, list):
                val = _value(v, params, where)
                assert isinstance(val, tuple)
                if val[0] < 0 or val[1] > 1:
                    raise UserError(f"{where}: loss range must lie within 0..1")
                te.loss = val
            else:
                te.loss = _check_loss(v, where)
    if all(x is None for x in (te.rate_bps, te.trace, te.delay_ms, te.loss)):
        raise UserError(f"{here}: timeline entry changes nothing (give rate_*, trace, "
                        "delay_ms/rtt_ms or loss)")
    return te

"""`pccstream ab stalls`: when in the session each arm stalled, from stored player series.

The buffering ratio says how much an arm stalled, not when. Every viewer session of every
run in the databases adds its stall time to the phase of the session it fell in (phases are
spans of the page's clock, `t_s`, the same clock as the report's time series), so a table
shows whether an arm loses at the start, after the first path change, or all along.

The player reports its cumulative stall seconds and stall count at every sample (every 0.5 s),
and a stall shorter than that shows only there: the increments, not the sampled state, are
counted, each in the phase of the sample that reported it.
"""

from __future__ import annotations

import bisect
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pccstream.ab.store import open_store
from pccstream.errors import UserError

DEFAULT_EDGES = (0.0, 5.0, 10.0, 20.0)


@dataclass(frozen=True)
class ArmStalls:
    arm: str
    sessions: int
    stall_s: list[float]  # per session, one per phase
    stalls: list[float]  # stalls begun per session, one per phase

    @property
    def total_s(self) -> float:
        return sum(self.stall_s)


@dataclass(frozen=True)
class StallPhases:
    edges: list[float]  # phase i is [edges[i], edges[i + 1]); the last is open-ended
    arms: list[ArmStalls]


def parse_edges(text: str) -> list[float]:
    """`--edges 0,5,10,20` as ascending seconds."""
    try:
        edges = [float(part) for part in text.split(",")]
    except ValueError:
        raise UserError(f"--edges {text}: expected ascending seconds, e.g. 0,5,10,20") from None
    if (not edges or edges[0] != 0 or not all(math.isfinite(e) for e in edges)
            or any(b <= a for a, b in zip(edges, edges[1:], strict=False))):
        raise UserError(f"--edges {text}: expected ascending seconds starting at 0, "
                        "e.g. 0,5,10,20")
    return edges


def _phase(edges: Sequence[float], t: float) -> int:
    """The phase holding page time `t` (a sample before 0 counts in the first)."""
    return max(0, bisect.bisect_right(edges, t) - 1)


def _add_session(points: list[dict[str, Any]], edges: Sequence[float],
                 stall_s: list[float], stalls: list[float]) -> None:
    seconds, count = 0.0, 0.0
    for point in points:
        now_s = float(point.get("stall_seconds") or 0.0)
        now_n = float(point.get("stall_count") or 0.0)
        phase = _phase(edges, float(point.get("t_s") or 0.0))
        stall_s[phase] += max(0.0, now_s - seconds)
        stalls[phase] += max(0.0, now_n - count)
        seconds, count = max(seconds, now_s), max(count, now_n)


def summarize(paths: Sequence[str | Path], *, edges: Sequence[float] = DEFAULT_EDGES,
              arms: Sequence[str] = ()) -> StallPhases:
    """Stall time per viewer session by phase, per arm, over the databases at `paths`."""
    n = len(edges)
    stall_s: dict[str, list[float]] = defaultdict(lambda: [0.0] * n)
    stalls: dict[str, list[float]] = defaultdict(lambda: [0.0] * n)
    sessions: dict[str, int] = defaultdict(int)
    arms_seen: set[str] = set()
    for path in paths:
        with open_store(path, read_only=True) as store:
            for run in store.runs():
                arm = run["arm"]
                arms_seen.add(arm)
                if arms and arm not in arms:
                    continue
                for points in json.loads(run["series_json"] or "{}").get("player") or []:
                    sessions[arm] += 1
                    _add_session(points, edges, stall_s[arm], stalls[arm])
    missing = [a for a in arms if a not in sessions]
    if missing or not sessions:
        known = ", ".join(sorted(arms_seen)) or "none"
        what = f"--arm {', '.join(missing)}" if missing else "the databases"
        raise UserError(f"{what}: no player series in {', '.join(map(str, paths))} "
                        f"(arms: {known})")
    order = list(arms) or sorted(sessions)
    return StallPhases(list(edges), [
        ArmStalls(a, sessions[a], [s / sessions[a] for s in stall_s[a]],
                  [c / sessions[a] for c in stalls[a]]) for a in order])


def _phase_names(edges: Sequence[float]) -> list[str]:
    bounds = [f"{e:g}" for e in edges]
    spans = [f"{a}–{b} s" for a, b in zip(bounds, bounds[1:], strict=False)]
    return [*spans, f"{bounds[-1]} s–end"]


def markdown(result: StallPhases) -> str:
    names = _phase_names(result.edges)
    head = "| arm | sessions | " + " | ".join(names) + " | total |"
    lines = ["Stall seconds per viewer session by phase of the session (stalls per session "
             "in brackets):", "", head, "|" + " --- |" * (len(names) + 3)]
    for a in result.arms:
        cells = [f"{s:.3f} ({c:.1f})" for s, c in zip(a.stall_s, a.stalls, strict=True)]
        lines.append(f"| {a.arm} | {a.sessions} | " + " | ".join(cells)
                     + f" | {a.total_s:.3f} ({sum(a.stalls):.1f}) |")
    return "\n".join(lines) + "\n"


def to_json(result: StallPhases) -> dict[str, Any]:
    return {"edges": result.edges, "phases": _phase_names(result.edges),
            "arms": [asdict(a) | {"total_s": a.total_s} for a in result.arms]}

"""Issue #13's cellular targets from `bench transfer` JSON files (infra/experiments/cellular.sh):
per trace, the cellular Vivace profile against BBR and ewma-bdp on medians over runs.

    python -m pccstream.bench.cellular docs/results/cellular [--profile ARM] [--json]

Targets: p95 signal delay <= 0.5 x BBR's, throughput >= 0.5 x BBR's, power >= ewma-bdp's.
Files of the same recording and duration make one row: each arm's runs are pooled across them
and its medians recomputed, so arms measured by separate invocations are compared.
Each row also gives the trace's floor: the p95 signal delay of a sender that never queues
(its wait for the downlink's next delivery opportunity). Where the floor is above half of
BBR's delay, no sender meets the delay target on that trace.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..cli_conventions import add_json, run_command
from ..emulator.analyze import signal_delay_floor_ms
from ..emulator.scenario import load_scenario
from ..errors import UserError
from .transfer import summarize_arm

PROFILE = "vivace-lte"
DELAY_RATIO_MAX = 0.5
THROUGHPUT_RATIO_MIN = 0.5


def _median(doc: dict[str, Any], arm: str, key: str) -> float | None:
    value = doc.get("arms", {}).get(arm, {}).get("median", {}).get(key)
    return float(value) if isinstance(value, (int, float)) else None


def _median_runs(summary: dict[str, Any]) -> float | None:
    """How many runs an arm's medians are over (None in files that do not say)."""
    counted = summary.get("median_runs")
    return float(counted) if isinstance(counted, int | float) else None


def _all_runs_flagged(summary: dict[str, Any]) -> bool:
    """Whether every run of an arm was CPU-starved, so its medians count flagged runs."""
    runs, starved = summary.get("runs"), summary.get("starved_runs")
    return isinstance(runs, list) and isinstance(starved, list) and 0 < len(runs) <= len(starved)


def _ratio(a: dict[str, float | None] | None, b: dict[str, float | None] | None,
           key: str) -> float | None:
    x, y = (a or {}).get(key), (b or {}).get(key)
    return x / y if x is not None and y else None


def trace_floor_ms(scenario: object) -> float | None:
    """The scenario's downlink floor (`signal_delay_floor_ms`), or None without a trace."""
    if not isinstance(scenario, str):
        return None
    try:
        trace = load_scenario(scenario).direction("down").build_trace()
    except UserError:
        return None
    return signal_delay_floor_ms(trace) if trace is not None else None


def evaluate(doc: dict[str, Any], profile: str = PROFILE,
             floor_ms: float | None = None) -> dict[str, Any]:
    """One trace's row: each arm's medians, the trace's floor and the three target checks
    for `profile`."""
    arms = {arm: {k: _median(doc, arm, k)
                  for k in ("throughput_mbps", "p95_signal_delay_ms", "power")}
            for arm in doc.get("arms", {})}
    for arm, medians in arms.items():
        medians["median_runs"] = _median_runs(doc["arms"][arm])
        medians["flagged"] = _all_runs_flagged(doc["arms"][arm])
    row: dict[str, Any] = {"scenario": doc.get("scenario"), "duration_s": doc.get("duration_s"),
                           "runs": doc.get("runs"), "profile": profile, "arms": arms,
                           "floor_ms": floor_ms}
    ours, bbr, ewma = arms.get(profile), arms.get("bbr"), arms.get("ewma-bdp")
    bbr_delay = (bbr or {}).get("p95_signal_delay_ms")
    if floor_ms is not None and bbr_delay:
        row["floor_ratio_vs_bbr"] = floor_ms / bbr_delay
    delay = _ratio(ours, bbr, "p95_signal_delay_ms")
    throughput = _ratio(ours, bbr, "throughput_mbps")
    if delay is not None and throughput is not None:
        row["delay_ratio_vs_bbr"], row["throughput_ratio_vs_bbr"] = delay, throughput
        row["delay_ok"] = row["delay_ratio_vs_bbr"] <= DELAY_RATIO_MAX
        row["throughput_ok"] = row["throughput_ratio_vs_bbr"] >= THROUGHPUT_RATIO_MIN
    if ours and ewma and ours["power"] is not None and ewma["power"] is not None:
        row["power_ok"] = ours["power"] >= ewma["power"]
    row["ack_silences"] = _silence_verdicts(doc, profile)
    return row


def _silence_verdicts(doc: dict[str, Any], profile: str) -> list[dict[str, Any]]:
    """Per run of `profile`, the ACK silences its sender judged held or out (runs whose
    files predate the verdicts, or arms that do not judge them, give none)."""
    runs = doc.get("arms", {}).get(profile, {}).get("runs", [])
    flows = [run.get("ack_silences") for run in runs if isinstance(run, dict)]
    return [verdicts[0] for verdicts in flows if verdicts and verdicts[0] is not None]


def pool(docs: list[tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """One document from files of the same recording and duration: an arm in one file keeps
    its summary; an arm in several has its runs pooled and its medians recomputed
    (`summarize_arm`: over the runs not CPU-starved)."""
    if len(docs) == 1:
        return docs[0][1]
    where: dict[str, list[Path]] = {}
    for path, doc in docs:
        for arm in doc.get("arms", {}):
            where.setdefault(arm, []).append(path)
    arms: dict[str, Any] = {}
    for arm, paths in where.items():
        summaries = [doc["arms"][arm] for path, doc in docs if path in paths]
        if len(summaries) == 1:
            arms[arm] = summaries[0]
            continue
        runs = [s.get("runs") for s in summaries]
        if not all(isinstance(r, list) and r for r in runs):
            raise UserError(f"{', '.join(p.name for p in paths)}: arm {arm} is in each, but "
                            "not every file keeps its runs, so they cannot be pooled")
        arms[arm] = summarize_arm([run for r in runs for run in r])
    first = docs[0][1]
    return {**first, "runs": max(doc.get("runs") or 0 for _, doc in docs), "arms": arms}


def _read(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not a bench transfer JSON file: {exc}") from None
    if not isinstance(doc, dict) or doc.get("benchmark") != "transfer":
        raise UserError(f"{path}: not a bench transfer JSON file")
    arms, runs = doc.get("arms", {}), doc.get("runs")
    if not isinstance(arms, dict) or not all(isinstance(a, dict) for a in arms.values()):
        raise UserError(f"{path}: 'arms' is not an object of arm summaries")
    if runs is not None and not isinstance(runs, int):
        raise UserError(f"{path}: 'runs' is {runs!r}, not a run count")
    return doc


def load_rows(directory: Path, profile: str = PROFILE) -> list[dict[str, Any]]:
    files = sorted(directory.glob("*.json"))
    if not files:
        raise UserError(f"{directory}: no bench transfer JSON files")
    groups: dict[tuple[str, str], list[tuple[Path, dict[str, Any]]]] = {}
    for path in files:
        doc = _read(path)
        key = (str(doc.get("scenario")), str(doc.get("duration_s")))
        groups.setdefault(key, []).append((path, doc))
    rows = []
    for docs in groups.values():
        doc = pool(docs)
        row = evaluate(doc, profile, trace_floor_ms(doc.get("scenario")))
        row["files"] = [path.name for path, _ in docs]
        rows.append(row)
    return rows


def _fmt(v: float | None, spec: str) -> str:
    return "—" if v is None else format(v, spec)


def _check(row: dict[str, Any], ratio: str, ok: str) -> str:
    v = row.get(ratio)
    return "—" if v is None else f"{v:.2f} {'✓' if row[ok] else '✗'}"


def markdown(rows: list[dict[str, Any]]) -> str:
    profile = rows[0]["profile"] if rows else PROFILE
    arms = sorted({a for r in rows for a in r["arms"]}, key=lambda a: (a != profile, a))
    head = "| trace | " + " | ".join(f"{a} Mbit/s @ p95 ms (power) ×runs" for a in arms)
    head += " | floor ms (/ BBR) | delay / BBR | thr / BBR | power ≥ ewma-bdp |"
    verdicts = any(r.get("ack_silences") for r in rows)
    if verdicts:
        head += f" {profile}'s silences held/out (share) |"
    lines = [head, "|" + " --- |" * (len(arms) + 5 + verdicts)]
    for r in rows:
        cells = []
        for a in arms:
            m = r["arms"].get(a, {})
            counted = m.get("median_runs")
            cells.append(f"{_fmt(m.get('throughput_mbps'), '.2f')} @ "
                         f"{_fmt(m.get('p95_signal_delay_ms'), '.0f')} "
                         f"({_fmt(m.get('power'), '.1f')})"
                         + (f" ×{counted:.0f}" if counted else "")
                         + ("†" if m.get("flagged") else ""))
        power = "—" if "power_ok" not in r else ("✓" if r["power_ok"] else "✗")
        floor = _fmt(r.get("floor_ms"), ".0f")
        if r.get("floor_ratio_vs_bbr") is not None:
            floor += f" ({r['floor_ratio_vs_bbr']:.2f})"
        line = (f"| {r['scenario']} | " + " | ".join(cells) + f" | {floor} | "
                + _check(r, "delay_ratio_vs_bbr", "delay_ok") + " | "
                + _check(r, "throughput_ratio_vs_bbr", "throughput_ok") + f" | {power} |")
        if verdicts:
            line += " " + (", ".join(f"{v['held']}/{v['out']} ({v['hold_share']:.2f})"
                                     for v in r.get("ack_silences") or []) or "—") + " |"
        lines.append(line)
    if any(m.get("flagged") for r in rows for m in r["arms"].values()):
        lines += ["", "† every run of that arm was CPU-starved (the host stalled or was busy): "
                      "its medians count flagged runs."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pccstream.bench.cellular",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--profile", default=PROFILE, metavar="ARM",
                        help=f"the arm the targets are checked for (default {PROFILE}), e.g. "
                             "a variant such as vivace-lte:bdp_cap_gain=1.25")
    add_json(parser)
    parser.set_defaults(func=_print_rows)
    return run_command(parser.parse_args(argv))


def _print_rows(args: argparse.Namespace) -> int:
    rows = load_rows(args.directory, args.profile)
    if not any(args.profile in row["arms"] for row in rows):
        arms = sorted({a for row in rows for a in row["arms"]})
        raise UserError(f"--profile {args.profile}: no file in {args.directory} has that arm "
                        f"(arms: {', '.join(arms)})")
    print(json.dumps(rows, indent=2) if args.json else markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

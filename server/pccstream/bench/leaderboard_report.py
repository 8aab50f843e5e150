"""Issue #15's leaderboard campaign (infra/experiments/leaderboard.sh), summarised: per
scenario and arm, medians over runs of throughput, p95 signal delay and power with their
spread (min-max), the host's 1-minute load when each run started, and how close each arm
comes to the anchors.

    python -m pccstream.bench.leaderboard_report OUT_DIR [--json] [--plot-dir DIR]

OUT_DIR holds SCENARIO/ARM.runN.json (one `bench leaderboard --runs 1 --json` each) and
loads.txt. Anchors:
- the contest's best write-up, Verizon-LTE-short + 20 ms: power 41.9 (3.31 Mbit/s at 79 ms);
- Sprout's paper: Cubic's self-inflicted delay is 79 x Sprout's, Sprout's throughput 0.91 x
  Cubic's (here: every arm against Cubic on the same scenario);
- the issue's bar for `sprout`: p95 signal delay <= 0.1 x Cubic's, throughput >= 0.6 x Cubic's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from ..cli_conventions import add_json, run_command
from ..errors import UserError
from .leaderboard import plot_leaderboard

CONTEST_SCENARIO = "verizon-lte-short"
CONTEST_POWER = 41.9
CONTEST_THROUGHPUT_MBPS = 3.31
CONTEST_DELAY_MS = 79.0
SPROUT_PAPER_DELAY_RATIO = 79.0  # Cubic's delay / Sprout's
SPROUT_PAPER_THROUGHPUT_RATIO = 0.91  # Sprout's throughput / Cubic's
ISSUE_DELAY_RATIO_MAX = 0.1  # sprout's delay / Cubic's
ISSUE_THROUGHPUT_RATIO_MIN = 0.6  # sprout's throughput / Cubic's
# A run that started with the 1-minute load above this did not have the machine alone.
QUIET_LOAD = 1.0
METRICS = ("throughput_mbps", "p95_signal_delay_ms", "power")


def read_loads(path: Path) -> dict[tuple[str, str, int], float]:
    """1-minute load at each run's start, by (scenario, arm file name, run)."""
    loads: dict[tuple[str, str, int], float] = {}
    if not path.is_file():
        return loads
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        parts = line.split()
        if len(parts) < 6 or parts[3] != "start":
            continue
        try:
            loads[(parts[0], parts[1], int(parts[2]))] = float(parts[5])
        except ValueError:
            raise UserError(
                f"{path}:{number}: not 'SCENARIO ARM RUN start TIME LOAD1 ...'") from None
    return loads


def read_runs(directory: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """scenario -> arm label -> runs (each the leaderboard row plus `run` and `load1`)."""
    if not directory.is_dir():
        raise UserError(f"{directory}: no such directory")
    loads = read_loads(directory / "loads.txt")
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for path in sorted(directory.glob("*/*.run*.json")):
        stem, _, run_text = path.name.removesuffix(".json").rpartition(".run")
        try:
            doc = json.loads(path.read_text())
            row = doc["rows"][0]
            run = int(run_text)
        except (OSError, ValueError, KeyError, IndexError) as exc:
            raise UserError(f"{path}: not a `bench leaderboard --json` result ({exc})") from None
        scenario = path.parent.name
        out.setdefault(scenario, {}).setdefault(row["arm"], []).append(
            {**row, "run": run, "duration_s": doc.get("duration_s"),
             "load1": loads.get((scenario, stem, run))})
    if not out:
        raise UserError(f"{directory}: no SCENARIO/ARM.runN.json files")
    return out


def _spread(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def summarize(runs: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    scenarios: dict[str, Any] = {}
    for scenario, arms in runs.items():
        table: dict[str, Any] = {}
        for arm, arm_runs in arms.items():
            entry: dict[str, Any] = {m: _spread([r[m] for r in arm_runs
                                                 if isinstance(r.get(m), (int, float))])
                                     for m in METRICS}
            loads = [r["load1"] for r in arm_runs if r["load1"] is not None]
            entry["load1_max"] = max(loads) if loads else None
            entry["errors"] = [e for r in arm_runs for e in r.get("errors", [])]
            table[arm] = entry
        median = {arm: {m: e[m]["median"] for m in METRICS} for arm, e in table.items()}
        cubic = median.get("cubic")
        for arm, entry in table.items():
            anchors: dict[str, Any] = {}
            if cubic is not None and arm != "cubic":
                delay_vs_cubic = _ratio(median[arm]["p95_signal_delay_ms"],
                                        cubic["p95_signal_delay_ms"])
                anchors["cubic_delay_over_arm"] = (1 / delay_vs_cubic if delay_vs_cubic
                                                   else None)
                anchors["throughput_over_cubic"] = _ratio(median[arm]["throughput_mbps"],
                                                          cubic["throughput_mbps"])
                anchors["issue_bar_met"] = (
                    None if delay_vs_cubic is None or anchors["throughput_over_cubic"] is None
                    else delay_vs_cubic <= ISSUE_DELAY_RATIO_MAX
                    and anchors["throughput_over_cubic"] >= ISSUE_THROUGHPUT_RATIO_MIN)
            if scenario == CONTEST_SCENARIO:
                anchors["power_over_contest_best"] = _ratio(median[arm]["power"], CONTEST_POWER)
                anchors["throughput_over_contest_best"] = _ratio(
                    median[arm]["throughput_mbps"], CONTEST_THROUGHPUT_MBPS)
                anchors["delay_over_contest_best"] = _ratio(
                    median[arm]["p95_signal_delay_ms"], CONTEST_DELAY_MS)
            entry["anchors"] = anchors
        scenarios[scenario] = dict(sorted(
            table.items(), key=lambda kv: -(kv[1]["power"]["median"] or 0.0)))
    return {
        "anchors": {
            "contest_best": {"scenario": CONTEST_SCENARIO, "power": CONTEST_POWER,
                             "throughput_mbps": CONTEST_THROUGHPUT_MBPS,
                             "p95_signal_delay_ms": CONTEST_DELAY_MS},
            "sprout_paper": {"cubic_delay_over_sprout": SPROUT_PAPER_DELAY_RATIO,
                             "sprout_throughput_over_cubic": SPROUT_PAPER_THROUGHPUT_RATIO},
            "issue_bar_sprout": {"delay_over_cubic_max": ISSUE_DELAY_RATIO_MAX,
                                 "throughput_over_cubic_min": ISSUE_THROUGHPUT_RATIO_MIN},
        },
        "quiet_load": QUIET_LOAD,
        "scenarios": scenarios,
    }


def _cell(spread: dict[str, Any], digits: int) -> str:
    if spread["median"] is None:
        return "n/a"
    return (f"{spread['median']:.{digits}f} ({spread['min']:.{digits}f}–"
            f"{spread['max']:.{digits}f})")


def _x(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}×"


def format_report(summary: dict[str, Any]) -> str:
    lines: list[str] = []
    for scenario, table in summary["scenarios"].items():
        contest = scenario == CONTEST_SCENARIO
        lines.append(f"\n## {scenario}: medians (min–max) over runs\n")
        header = ["arm", "runs", "Mbit/s", "p95 sig. delay ms", "power", "max load1",
                  "Cubic delay ÷ arm's (paper: 79×)", "tput ÷ Cubic's (paper: 0.91×)",
                  "issue bar"]
        if contest:
            header += ["power ÷ 41.9", "tput ÷ 3.31", "delay ÷ 79 ms"]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "|".join(" --- " for _ in header) + "|")
        for arm, e in table.items():
            a = e["anchors"]
            load = e["load1_max"]
            bar = a.get("issue_bar_met")
            cells = [arm, str(e["power"]["n"]), _cell(e["throughput_mbps"], 2),
                     _cell(e["p95_signal_delay_ms"], 0), _cell(e["power"], 1),
                     "–" if load is None else f"{load:.2f}" + (" (busy)" if load > QUIET_LOAD
                                                                else ""),
                     _x(a.get("cubic_delay_over_arm"), 1), _x(a.get("throughput_over_cubic")),
                     "–" if bar is None else ("met" if bar else "missed")]
            if contest:
                cells += [_x(a.get("power_over_contest_best")),
                          _x(a.get("throughput_over_contest_best")),
                          _x(a.get("delay_over_contest_best"))]
            lines.append("| " + " | ".join(cells) + " |")
            if e["errors"]:
                lines.append(f"|   errors: {'; '.join(e['errors'][:3])} |")
    lines.append("\nAnchors: contest best write-up power 41.9 (3.31 Mbit/s at 79 ms, "
                 f"{CONTEST_SCENARIO} + 20 ms); Sprout paper: Cubic's self-inflicted delay 79× "
                 "Sprout's at 0.91× Cubic's throughput. Issue bar (sprout): delay ≤ 0.1× "
                 "Cubic's, throughput ≥ 0.6× Cubic's. Power = Mbit/s × 1000 / p95 ms.")
    return "\n".join(lines).lstrip("\n")


def plot(runs: dict[str, dict[str, list[dict[str, Any]]]], summary: dict[str, Any],
         directory: Path) -> list[Path]:
    """One throughput-vs-delay plot per scenario (`bench leaderboard --plot`'s picture)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for scenario, table in summary["scenarios"].items():
        rows = [{"arm": arm, "throughput_mbps": e["throughput_mbps"]["median"],
                 "p95_signal_delay_ms": e["p95_signal_delay_ms"]["median"]}
                for arm, e in table.items()]
        counts = {e["power"]["n"] for e in table.values()}
        durations = {r["duration_s"] for arm_runs in runs[scenario].values() for r in arm_runs}
        result = {"scenario": scenario, "runs": max(counts, default=0),
                  "duration_s": max((d for d in durations if d is not None), default=0),
                  "rows": rows, "transfer": {"arms": {arm: {"runs": arm_runs}
                                                      for arm, arm_runs in
                                                      runs[scenario].items()}}}
        out = directory / f"{scenario}.svg"
        plot_leaderboard(result, out)
        written.append(out)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pccstream.bench.leaderboard_report",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    add_json(parser)
    parser.add_argument("--plot-dir", type=Path, help="write SCENARIO.svg plots here")
    parser.set_defaults(func=_print_summary)
    return run_command(parser.parse_args(argv))


def _print_summary(args: argparse.Namespace) -> int:
    runs = read_runs(args.directory)
    summary = summarize(runs)
    if args.plot_dir is not None:
        plot(runs, summary, args.plot_dir)
    print(json.dumps(summary, indent=2) if args.json else format_report(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

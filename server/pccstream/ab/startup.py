"""VOD startup figures from `pccstream ab` databases (issue 16; infra/experiments/vod-startup.sh).

Per experiment and arm: the median startup over runs (each run: play request → first frame),
the startup budget of the issue, 2 × RTT + 400 ms, with the RTT the session measured while
starting (the smallest `min_rtt_ms` of the server's telemetry in the run's first 2 s), or
600 ms on loopback (`--scenario none`), the buffering ratio (mean with a 95 % bootstrap CI), and the
1-minute load average when each run began.

    python -m pccstream.ab.startup docs/results/startup [--json summary.json] [--md summary.md]

reads every `*.sqlite` in the directory (old-code databases included: the schema is the same)
and writes the summary as JSON and as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
from pathlib import Path
from typing import Any

from pccstream.ab.design import NO_EMULATOR
from pccstream.ab.stats import bootstrap_ci
from pccstream.ab.store import telemetry

# The bounds: startup ≤ 2 × RTT + 400 ms on an emulated link, ≤ 600 ms on loopback.
BUDGET_RTTS = 2
BUDGET_EXTRA_MS = 400.0
LOOPBACK_BUDGET_MS = 600.0
# Telemetry within this long of the session start gives the startup RTT.
STARTUP_WINDOW_MS = 2000.0


def startup_rtt_ms(records: list[Any]) -> float | None:
    """The smallest min_rtt_ms of the first viewer's `sample` records in the startup window."""
    viewer = records[0] if records and isinstance(records[0], list) else records
    rtts = [
        float(r["min_rtt_ms"])
        for r in viewer
        if isinstance(r, dict)
        and r.get("type") == "sample"
        and isinstance(r.get("min_rtt_ms"), int | float)
        and r["min_rtt_ms"] > 0
        and float(r.get("t_ms", 0)) <= STARTUP_WINDOW_MS
    ]
    return min(rtts) if rtts else None


def summarize_db(path: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        experiments = {row["id"]: row for row in conn.execute("SELECT * FROM experiments")}
        rows = conn.execute("SELECT * FROM runs ORDER BY experiment_id, arm, block").fetchall()
    finally:
        conn.close()
    groups: dict[tuple[str, str], list[sqlite3.Row]] = {}
    for row in rows:
        groups.setdefault((row["experiment_id"], row["arm"]), []).append(row)
    out: list[dict[str, Any]] = []
    for (experiment_id, arm), runs in groups.items():
        design = json.loads(experiments[experiment_id]["design_json"])
        per_run = []
        for run in runs:
            config = json.loads(run["config_json"])
            rtt = startup_rtt_ms(telemetry(run))
            startup = run["startup_delay_ms"]
            if design["scenario"] == NO_EMULATOR:
                budget: float | None = LOOPBACK_BUDGET_MS
            else:
                budget = None if rtt is None else BUDGET_RTTS * rtt + BUDGET_EXTRA_MS
            per_run.append({
                "block": run["block"],
                "startup_ms": startup,
                "startup_rtt_ms": rtt,
                "budget_ms": budget,
                "within_budget": None if budget is None or startup is None else startup <= budget,
                "buffering_ratio": run["buffering_ratio"],
                "stall_count": run["stall_count"],
                "mean_bitrate_kbps": run["mean_bitrate_kbps"],
                "loadavg_1min_start": (config.get("loadavg_start") or [None])[0],
                "loadavg_1min_end": (config.get("loadavg_end") or [None])[0],
                # (sqlite3.Row's `in` looks at values, so keys() it is)
                "cpu_starved": run["cpu_starved"] if "cpu_starved" in run.keys() else None,  # noqa: SIM118
                "player_errors": run["player_errors"],
            })
        startups = [r["startup_ms"] for r in per_run if r["startup_ms"] is not None]
        budgets = [r["budget_ms"] for r in per_run if r["budget_ms"] is not None]
        ratio = bootstrap_ci([r["buffering_ratio"] for r in per_run])
        out.append({
            "db": path.name,
            "experiment_id": experiment_id,
            "label": experiments[experiment_id]["label"],
            "scenario": design["scenario"],
            "bitrate_kbps": design.get("bitrate_kbps"),
            "player_params": dict(design.get("player_params") or []),
            "arm": arm,
            "runs": len(per_run),
            "median_startup_ms": statistics.median(startups) if startups else None,
            "median_budget_ms": statistics.median(budgets) if budgets else None,
            "runs_within_budget": sum(1 for r in per_run if r["within_budget"]),
            "buffering_ratio_mean": ratio.value,
            "buffering_ratio_ci95": [ratio.low, ratio.high],
            "max_loadavg_1min_start": max(
                (r["loadavg_1min_start"] for r in per_run if r["loadavg_1min_start"] is not None),
                default=None,
            ),
            "per_run": per_run,
        })
    return out


def markdown(summary: list[dict[str, Any]]) -> str:
    def num(value: float | None, fmt: str = ".0f") -> str:
        return "–" if value is None else format(value, fmt)

    lines = [
        "| database | experiment | arm | runs | median startup ms | median budget ms | "
        "runs within | buffering ratio % [95 % CI] | max load at start |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for s in summary:
        low, high = s["buffering_ratio_ci95"]
        ratio = num(None if s["buffering_ratio_mean"] is None else s["buffering_ratio_mean"] * 100,
                    ".2f")
        if low is not None and high is not None:
            ratio += f" [{low * 100:.2f}, {high * 100:.2f}]"
        lines.append(
            f"| {s['db']} | {s['label']} | {s['arm']} | {s['runs']} | "
            f"{num(s['median_startup_ms'])} | {num(s['median_budget_ms'])} | "
            f"{s['runs_within_budget']}/{s['runs']} | {ratio} | "
            f"{num(s['max_loadavg_1min_start'], '.2f')} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pccstream.ab.startup", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("dirs", nargs="+", type=Path, help="directories of ab databases")
    parser.add_argument("--json", type=Path, help="write the summary here (default: stdout)")
    parser.add_argument("--md", type=Path, help="also write a Markdown table here")
    args = parser.parse_args(argv)
    summary: list[dict[str, Any]] = []
    for directory in args.dirs:
        if not directory.is_dir():
            print(f"{directory}: not a directory", file=sys.stderr)
            return 2
        for db in sorted(directory.glob("*.sqlite")):
            summary += summarize_db(db)
    text = json.dumps(summary, indent=1)
    if args.json:
        args.json.write_text(text + "\n")
    else:
        print(text)
    if args.md:
        args.md.write_text(markdown(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""VOD startup figures from `pccstream ab` databases (issue 16; infra/experiments/vod-startup.sh).

Per experiment and arm: the median startup over runs (each run: play request → first frame),
the startup budget of the issue, 2 × RTT + 400 ms, with the RTT the session measured while
starting, or 600 ms on loopback (`--scenario none`), the buffering ratio (mean with a 95 %
bootstrap CI), the 1-minute load average when each run began, and where the startup went: the
median of each step of the player's `startupPhases` (ms since the play request; the last,
`firstFrameMs`, is the first frame the compositor presented, requestVideoFrameCallback).

The startup RTT is the session's `min_rtt_ms` (a running minimum since the handshake) in the
last telemetry sample taken within the startup: the server's clock starts at the session,
after the play request, so samples up to `t_ms` = startup delay were all taken while starting
(the first sample if none was; within 2 s when the run never started).

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
from pccstream.ab.store import telemetry_sessions

# The bounds: startup ≤ 2 × RTT + 400 ms on an emulated link, ≤ 600 ms on loopback.
BUDGET_RTTS = 2
BUDGET_EXTRA_MS = 400.0
LOOPBACK_BUDGET_MS = 600.0
# Telemetry within this long of the session start gives the startup RTT.
STARTUP_WINDOW_MS = 2000.0


def startup_rtt_ms(sessions: list[list[dict[str, Any]]],
                   window_ms: float | None = None) -> float | None:
    """The smallest min_rtt_ms of the first viewer's `sample` records (`sessions` as
    `store.telemetry_sessions` gives them) within `window_ms` of the session start
    (STARTUP_WINDOW_MS when None), or of its first sample with an RTT when none is that early."""
    if not sessions:
        return None
    window = STARTUP_WINDOW_MS if window_ms is None else window_ms
    samples = [
        (float(r.get("t_ms", 0)), float(r["min_rtt_ms"]))
        for r in sessions[0]
        if r.get("type") == "sample"
        and isinstance(r.get("min_rtt_ms"), int | float)
        and r["min_rtt_ms"] > 0
    ]
    if not samples:
        return None
    within = [rtt for t, rtt in samples if t <= window]
    return min(within) if within else min(samples)[1]


def startup_phases(viewers: list[Any]) -> dict[str, float] | None:
    """The first viewer's `startupPhases` (ms since the play request), None when absent (older
    players) or when the viewer recorded nothing."""
    viewer = viewers[0] if viewers and isinstance(viewers[0], dict) else None
    phases = viewer.get("startupPhases") if viewer else None
    if not isinstance(phases, dict):
        return None
    return {k: float(v) for k, v in phases.items() if isinstance(v, int | float)}


def median_phases(runs: list[dict[str, float] | None]) -> dict[str, float | None]:
    """Per step, the median over the runs that reached it (steps in first-seen order)."""
    names: dict[str, None] = {}
    for phases in runs:
        names.update(dict.fromkeys(phases or {}))
    out: dict[str, float | None] = {}
    for name in names:
        values = [p[name] for p in runs if p and name in p]
        out[name] = statistics.median(values) if values else None
    return out


def summarize_db(path: Path, name: str | None = None) -> list[dict[str, Any]]:
    """Per experiment and arm of the database at `path`, labelled `name` (its file name)."""
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
            startup = run["startup_delay_ms"]
            rtt = startup_rtt_ms(telemetry_sessions(run), startup)
            phases = startup_phases(json.loads(run["viewers_json"] or "[]"))
            if design["scenario"] == NO_EMULATOR:
                budget: float | None = LOOPBACK_BUDGET_MS
            else:
                budget = None if rtt is None else BUDGET_RTTS * rtt + BUDGET_EXTRA_MS
            per_run.append({
                "block": run["block"],
                "startup_ms": startup,
                "first_frame_ms": (phases or {}).get("firstFrameMs"),
                "phases_ms": phases,
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
        first_frames = [r["first_frame_ms"] for r in per_run if r["first_frame_ms"] is not None]
        budgets = [r["budget_ms"] for r in per_run if r["budget_ms"] is not None]
        ratio = bootstrap_ci([r["buffering_ratio"] for r in per_run])
        out.append({
            "db": name or path.name,
            "experiment_id": experiment_id,
            "label": experiments[experiment_id]["label"],
            "scenario": design["scenario"],
            "bitrate_kbps": design.get("bitrate_kbps"),
            "player_params": dict(design.get("player_params") or []),
            "arm": arm,
            "runs": len(per_run),
            "median_startup_ms": statistics.median(startups) if startups else None,
            "median_budget_ms": statistics.median(budgets) if budgets else None,
            "median_first_frame_ms": statistics.median(first_frames) if first_frames else None,
            "median_phases_ms": median_phases([r["phases_ms"] for r in per_run]),
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
        "| database | experiment | arm | runs | median startup ms | median first frame ms | "
        "median budget ms | runs within | buffering ratio % [95 % CI] | max load at start |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for s in summary:
        low, high = s["buffering_ratio_ci95"]
        ratio = num(None if s["buffering_ratio_mean"] is None else s["buffering_ratio_mean"] * 100,
                    ".2f")
        if low is not None and high is not None:
            ratio += f" [{low * 100:.2f}, {high * 100:.2f}]"
        lines.append(
            f"| {s['db']} | {s['label']} | {s['arm']} | {s['runs']} | "
            f"{num(s['median_startup_ms'])} | {num(s['median_first_frame_ms'])} | "
            f"{num(s['median_budget_ms'])} | "
            f"{s['runs_within_budget']}/{s['runs']} | {ratio} | "
            f"{num(s['max_loadavg_1min_start'], '.2f')} |"
        )
    phased = [s for s in summary if any(v is not None for v in s["median_phases_ms"].values())]
    if phased:
        names = list(dict.fromkeys(n for s in phased for n in s["median_phases_ms"]))
        lines += [
            "",
            "Startup phases: median ms since the play request (`metrics().startupPhases`; "
            "negative: done before it).",
            "",
            "| database | arm | " + " | ".join(n.removesuffix("Ms") for n in names) + " |",
            "| --- | --- |" + " ---: |" * len(names),
        ]
        for s in phased:
            cells = " | ".join(num(s["median_phases_ms"].get(n)) for n in names)
            lines.append(f"| {s['db']} | {s['arm']} | {cells} |")
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
    for i, directory in enumerate(args.dirs):
        if not directory.is_dir():
            print(f"{directory}: not a directory", file=sys.stderr)
            return 2
        for db in sorted(directory.glob("*.sqlite")):
            # Databases of the later directories (old/) are named with their directory.
            summary += summarize_db(db, db.name if i == 0 else f"{directory.name}/{db.name}")
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

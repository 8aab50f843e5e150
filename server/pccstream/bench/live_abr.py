"""Issue #16's live targets from `pccstream ab --mode live --abr` databases
(infra/experiments/live-abr.sh): per block, each live arm against the WebRTC arm.

    python -m pccstream.bench.live_abr docs/results/live/live-abr-*.sqlite [--json]

Every arm other than `webrtc` is a live arm (e.g. `vivace` and `vivace:player.fec=8`).
Targets, on the same blocks (same network realization): the live arm's p95 glass-to-glass
latency <= WebRTC's, and its stall count <= WebRTC's freeze count. Beside them the live
player's freezes counted by WebRTC's own rule (webrtc-stats freezeCount, from its rendered frame
times: like for like with WebRTC's; our stall, under one frame buffered, is stricter), each
arm's picture height (the resolution it chose) and mean bitrate.

Under the blocks, one row per scenario and arm over every block of the databases given: how
many blocks meet each target, and the mean paired p95 difference (arm − WebRTC) with its 95 %
bootstrap CI (seeded), so campaigns pool into one verdict instead of one coin toss per block.
Blocks where either run was flagged CPU-starved are counted beside it. `--json` prints
`{"blocks": [...], "summary": [...]}`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..ab.stats import bootstrap_ci
from ..ab.store import open_store
from ..cli_conventions import add_json, run_command
from ..errors import UserError

WEBRTC_ARM = "webrtc"
COLUMNS = ("latency_p95_ms", "stall_count", "freeze_count", "frame_height", "mean_bitrate_kbps",
           "cpu_starved")


def blocks(db: Path) -> list[dict[str, Any]]:
    """One row per (experiment, block, live arm) of a live design with a webrtc arm."""
    rows: list[dict[str, Any]] = []
    with open_store(db, read_only=True) as store:
        for experiment in store.experiments():
            design = store.design(experiment["id"])
            live_arms = [arm for arm in design.arms if arm != WEBRTC_ARM]
            if design.mode != "live" or WEBRTC_ARM not in design.arms or not live_arms:
                continue
            by_block: dict[int, dict[str, Any]] = {}
            for run in store.runs(experiment["id"]):
                by_block.setdefault(run["block"], {})[run["arm"]] = {c: run[c] for c in COLUMNS}
            for block in sorted(by_block):
                rtc = by_block[block].get(WEBRTC_ARM)
                for arm in live_arms:
                    live = by_block[block].get(arm)
                    row: dict[str, Any] = {
                        "db": db.name, "scenario": design.scenario_label, "block": block,
                        "live_abr": design.live_abr, "arm": arm, "live": live, WEBRTC_ARM: rtc,
                    }
                    if live and rtc:
                        row["latency_ok"] = _le(live["latency_p95_ms"], rtc["latency_p95_ms"])
                        row["stalls_ok"] = _le(live["stall_count"], rtc["stall_count"])
                        row["freezes_ok"] = _le(live["freeze_count"], _freezes(rtc))
                    rows.append(row)
    return rows


def _freezes(rtc: dict[str, Any]) -> float | None:
    """WebRTC's freeze count (its stall count: freezes are its stalls, in older databases too)."""
    return rtc["freeze_count"] if rtc.get("freeze_count") is not None else rtc["stall_count"]


def _le(a: float | None, b: float | None) -> bool | None:
    return None if a is None or b is None else a <= b


def _fmt(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("yes" if ok else "**no**")


def markdown(rows: list[dict[str, Any]]) -> str:
    header = ("| scenario | block | arm | p95 latency arm / webrtc (ms) | ≤ ? | stalls arm / "
              "webrtc freezes | ≤ ? | freezes by WebRTC's rule arm / webrtc | ≤ ? | "
              "picture height arm / webrtc (px) | mean bitrate arm / webrtc (kbit/s) |")
    lines = [header, "|" + " --- |" * 11]
    for row in rows:
        live, rtc = row["live"] or {}, row[WEBRTC_ARM] or {}

        def pair(column: str, digits: int = 0, live: dict = live, rtc: dict = rtc) -> str:
            return f"{_fmt(live.get(column), digits)} / {_fmt(rtc.get(column), digits)}"

        lines.append(
            f"| {row['scenario']} | {row['block']} | {row['arm']} | {pair('latency_p95_ms', 1)} | "
            f"{_verdict(row.get('latency_ok'))} | {pair('stall_count')} | "
            f"{_verdict(row.get('stalls_ok'))} | {_fmt(live.get('freeze_count'))} / "
            f"{_fmt(_freezes(rtc) if rtc else None)} | {_verdict(row.get('freezes_ok'))} | "
            f"{pair('frame_height')} | "
            f"{pair('mean_bitrate_kbps')} |"
        )
    return "\n".join(lines) + "\n"


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (scenario, arm), over the blocks where both arms ran: targets met, and the mean
    paired p95 difference in ms (arm − WebRTC) with a 95 % bootstrap CI."""
    pooled: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        if row["live"] and row[WEBRTC_ARM]:
            pooled.setdefault((row["scenario"], row["arm"]), []).append(row)
    out: list[dict[str, Any]] = []
    for (scenario, arm), group in pooled.items():
        diffs = [r["live"]["latency_p95_ms"] - r[WEBRTC_ARM]["latency_p95_ms"] for r in group
                 if r["live"]["latency_p95_ms"] is not None
                 and r[WEBRTC_ARM]["latency_p95_ms"] is not None]
        ci = bootstrap_ci(diffs)
        out.append({
            "scenario": scenario, "arm": arm, "blocks": len(group),
            "latency_ok": sum(1 for r in group if r.get("latency_ok")),
            "stalls_ok": sum(1 for r in group if r.get("stalls_ok")),
            "both_ok": sum(1 for r in group if r.get("latency_ok") and r.get("stalls_ok")),
            "p95_difference_ms": ci.value, "p95_difference_low_ms": ci.low,
            "p95_difference_high_ms": ci.high,
            "cpu_starved_blocks": sum(1 for r in group
                                      if r["live"].get("cpu_starved") or
                                      r[WEBRTC_ARM].get("cpu_starved")),
        })
    return out


def summary_markdown(summary_rows: list[dict[str, Any]]) -> str:
    lines = ["| scenario | arm | blocks | p95 ≤ WebRTC | stalls ≤ freezes | both | "
             "p95 arm − WebRTC, mean (95 % CI), ms | blocks with a CPU-starved run |",
             "|" + " --- |" * 8]
    for row in summary_rows:
        low, high = row["p95_difference_low_ms"], row["p95_difference_high_ms"]
        ci = "" if low is None or high is None else f" ({low:+.1f} … {high:+.1f})"
        point = row["p95_difference_ms"]
        lines.append(
            f"| {row['scenario']} | {row['arm']} | {row['blocks']} | {row['latency_ok']} | "
            f"{row['stalls_ok']} | {row['both_ok']} | "
            f"{'—' if point is None else f'{point:+.1f}'}{ci} | {row['cpu_starved_blocks']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pccstream.bench.live_abr",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("dbs", nargs="+", type=Path, metavar="DB.sqlite")
    add_json(parser)
    parser.set_defaults(func=_print_blocks)
    return run_command(parser.parse_args(argv))


def _print_blocks(args: argparse.Namespace) -> int:
    rows = [row for db in args.dbs for row in blocks(db)]
    if not rows:
        raise UserError("no live experiment with a webrtc arm and a live arm in "
                        + ", ".join(str(db) for db in args.dbs))
    pooled = summary(rows)
    if args.json:
        sys.stdout.write(json.dumps({"blocks": rows, "summary": pooled}, indent=2) + "\n")
    else:
        sys.stdout.write(markdown(rows) + "\n" + summary_markdown(pooled))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Issue #13's cellular targets from `bench transfer` JSON files (infra/experiments/cellular.sh):
per trace, the cellular Vivace profile against BBR and ewma-bdp on medians over runs.

    python -m pccstream.bench.cellular docs/results/cellular [--json]

Targets: p95 signal delay <= 0.5 x BBR's, throughput >= 0.5 x BBR's, power >= ewma-bdp's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..cli_conventions import add_json, run_command
from ..errors import UserError

PROFILE = "vivace-lte"
DELAY_RATIO_MAX = 0.5
THROUGHPUT_RATIO_MIN = 0.5


def _median(doc: dict[str, Any], arm: str, key: str) -> float | None:
    value = doc.get("arms", {}).get(arm, {}).get("median", {}).get(key)
    return float(value) if isinstance(value, (int, float)) else None


def _ratio(a: dict[str, float | None] | None, b: dict[str, float | None] | None,
           key: str) -> float | None:
    x, y = (a or {}).get(key), (b or {}).get(key)
    return x / y if x is not None and y else None


def evaluate(doc: dict[str, Any]) -> dict[str, Any]:
    """One trace's row: each arm's medians and the three target checks."""
    arms = {arm: {k: _median(doc, arm, k)
                  for k in ("throughput_mbps", "p95_signal_delay_ms", "power")}
            for arm in doc.get("arms", {})}
    row: dict[str, Any] = {"scenario": doc.get("scenario"), "duration_s": doc.get("duration_s"),
                           "runs": doc.get("runs"), "arms": arms}
    ours, bbr, ewma = arms.get(PROFILE), arms.get("bbr"), arms.get("ewma-bdp")
    delay = _ratio(ours, bbr, "p95_signal_delay_ms")
    throughput = _ratio(ours, bbr, "throughput_mbps")
    if delay is not None and throughput is not None:
        row["delay_ratio_vs_bbr"], row["throughput_ratio_vs_bbr"] = delay, throughput
        row["delay_ok"] = row["delay_ratio_vs_bbr"] <= DELAY_RATIO_MAX
        row["throughput_ok"] = row["throughput_ratio_vs_bbr"] >= THROUGHPUT_RATIO_MIN
    if ours and ewma and ours["power"] is not None and ewma["power"] is not None:
        row["power_ok"] = ours["power"] >= ewma["power"]
    return row


def load_rows(directory: Path) -> list[dict[str, Any]]:
    files = sorted(directory.glob("*.json"))
    if not files:
        raise UserError(f"{directory}: no bench transfer JSON files")
    rows = []
    for path in files:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise UserError(f"{path}: not a bench transfer JSON file: {exc}") from None
        if not isinstance(doc, dict) or doc.get("benchmark") != "transfer":
            raise UserError(f"{path}: not a bench transfer JSON file")
        rows.append(evaluate(doc))
    return rows


def _fmt(v: float | None, spec: str) -> str:
    return "—" if v is None else format(v, spec)


def _check(row: dict[str, Any], ratio: str, ok: str) -> str:
    v = row.get(ratio)
    return "—" if v is None else f"{v:.2f} {'✓' if row[ok] else '✗'}"


def markdown(rows: list[dict[str, Any]]) -> str:
    arms = sorted({a for r in rows for a in r["arms"]}, key=lambda a: (a != PROFILE, a))
    head = "| trace | " + " | ".join(f"{a} Mbit/s @ p95 ms (power)" for a in arms)
    head += " | delay / BBR | thr / BBR | power ≥ ewma-bdp |"
    lines = [head, "|" + " --- |" * (len(arms) + 4)]
    for r in rows:
        cells = []
        for a in arms:
            m = r["arms"].get(a, {})
            cells.append(f"{_fmt(m.get('throughput_mbps'), '.2f')} @ "
                         f"{_fmt(m.get('p95_signal_delay_ms'), '.0f')} "
                         f"({_fmt(m.get('power'), '.1f')})")
        power = "—" if "power_ok" not in r else ("✓" if r["power_ok"] else "✗")
        lines.append(f"| {r['scenario']} | " + " | ".join(cells) + " | "
                     + _check(r, "delay_ratio_vs_bbr", "delay_ok") + " | "
                     + _check(r, "throughput_ratio_vs_bbr", "throughput_ok") + f" | {power} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pccstream.bench.cellular",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("directory", type=Path)
    add_json(parser)
    parser.set_defaults(func=_print_rows)
    return run_command(parser.parse_args(argv))


def _print_rows(args: argparse.Namespace) -> int:
    rows = load_rows(args.directory)
    print(json.dumps(rows, indent=2) if args.json else markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

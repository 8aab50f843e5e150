"""`pccstream bench leaderboard`: every registered controller on one scenario, ranked by power.

The contest's scoreboard, reproduced in our stack: each arm is a `bench transfer` arm (same
server, same pacing hook, same emulated path, a fresh emulator per run with the same seed
for every arm), and the table holds the emulator's own figures, medians over runs:
throughput, p95 signal delay (the contest's definition, propagation excluded), power =
throughput (Mbit/s) x 1000 / p95 signal delay (ms), and loss. The plot is the Remy /
Pantheon throughput-vs-delay picture: delay on a log axis, reversed, so better is up and to
the right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pccstream.bench.transfer import Arm, TransferSettings, run_transfer
from pccstream.cc.registry import list_controllers
from pccstream.errors import UserError

# The contest's setup: Verizon LTE (short) downlink with 20 ms one-way delay.
DEFAULT_SCENARIO = "verizon-lte-short"

COLUMNS = (
    ("throughput_mbps", "Mbit/s"),
    ("p95_signal_delay_ms", "p95 sig. ms"),
    ("power", "power"),
    ("loss_rate", "loss"),
    ("utilization", "util."),
    ("p95_one_way_delay_ms", "p95 1-way ms"),
)


@dataclass
class LeaderboardSettings:
    scenario: str = DEFAULT_SCENARIO
    arms: list[Arm] | None = None  # None: every registered controller with its defaults
    scenario_params: dict[str, str] = field(default_factory=dict)
    duration_s: float = 30.0
    runs: int = 1
    seed: int = 1
    log_dir: Path | None = None


def default_arms() -> list[Arm]:
    return [Arm(info.name) for info in list_controllers()]


def rank(arms: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per arm from `run_transfer`'s "arms", best power first (no power: last)."""
    rows = []
    for label, data in arms.items():
        med = data["median"]
        runs = data["runs"]
        rows.append({
            "arm": label,
            **{key: med.get(key) for key, _ in COLUMNS},
            "runs": len(runs),
            "power_runs": [r.get("power") for r in runs],
            "errors": [e for r in runs for e in r.get("errors", [])],
        })
    rows.sort(key=lambda r: (r["power"] is None, -(r["power"] or 0.0)))
    for i, row in enumerate(rows, start=1):
        row["rank"] = i
    return rows


async def run_leaderboard(
    settings: LeaderboardSettings, progress: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    arms = settings.arms or default_arms()
    if not arms:
        raise UserError("the leaderboard needs at least one controller")
    transfer = TransferSettings(
        arms=arms,
        scenario=settings.scenario,
        scenario_params=settings.scenario_params,
        duration_s=settings.duration_s,
        runs=settings.runs,
        seed=settings.seed,
        log_dir=settings.log_dir,
    )
    result = await run_transfer(transfer, progress)
    return {
        "benchmark": "leaderboard",
        "scenario": settings.scenario,
        "scenario_params": settings.scenario_params,
        "duration_s": settings.duration_s,
        "runs": settings.runs,
        "seed": settings.seed,
        "metric_notes": {
            "p95_signal_delay_ms": "contest definition, measured at the bottleneck: "
            "propagation delay excluded",
            "power": "throughput_mbps * 1000 / p95_signal_delay_ms",
            "p95_one_way_delay_ms": "per-packet one-way delay through the emulator, "
            "propagation included",
        },
        "rows": rank(result["arms"]),
        "transfer": result,
    }


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """A fixed-width text table (also valid Markdown)."""
    header = ["#", "controller", *(title for _, title in COLUMNS)]
    lines = [header]
    for row in rows:
        cells = [str(row["rank"]), row["arm"]]
        for key, _ in COLUMNS:
            value = row.get(key)
            if value is None:
                cells.append("n/a")
            elif key == "loss_rate":
                cells.append(f"{value * 100:.2f} %")
            elif key == "utilization":
                cells.append(f"{value:.3f}")
            else:
                cells.append(f"{value:.1f}" if key != "throughput_mbps" else f"{value:.2f}")
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for n, line in enumerate(lines):
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True))
                   + " |")
        if n == 0:
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def plot_leaderboard(result: dict[str, Any], out: str | Path) -> None:
    """Throughput vs p95 signal delay, delay axis logarithmic and reversed (Remy style)."""
    out = Path(out)
    if out.suffix.lower() not in (".png", ".svg"):
        raise UserError(f"--plot {out}: output must end in .png or .svg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 6))
    rows = [r for r in result["rows"]
            if r["throughput_mbps"] is not None and r["p95_signal_delay_ms"]]
    cmap = plt.get_cmap("tab20")
    arms = result["transfer"]["arms"]
    for i, row in enumerate(rows):
        color = cmap(i % 20)
        runs = arms[row["arm"]]["runs"]
        xs = [r["p95_signal_delay_ms"] for r in runs if r.get("p95_signal_delay_ms")]
        ys = [r["throughput_mbps"] for r in runs if r.get("p95_signal_delay_ms")]
        if len(runs) > 1:
            ax.scatter(xs, ys, s=12, color=color, alpha=0.4)
        ax.scatter([row["p95_signal_delay_ms"]], [row["throughput_mbps"]], s=60, color=color,
                   edgecolors="black", linewidths=0.5, zorder=3)
        ax.annotate(row["arm"], (row["p95_signal_delay_ms"], row["throughput_mbps"]),
                    textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("95th percentile signal delay (ms, log scale; propagation excluded)")
    ax.set_ylabel("throughput (Mbit/s)")
    runs = result["runs"]
    ax.set_title(f"{result['scenario']}: {result['duration_s']:g} s x {runs} run"
                 f"{'s' if runs > 1 else ''} per controller (medians; better: up and right)")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)

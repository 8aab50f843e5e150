"""Plots like mm-throughput-graph / mm-delay-graph: capacity (filled) vs ingress and
throughput per bin, and per-packet queueing delay over time, one row per direction."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pccstream.emulator.analyze import DIR_NAMES, DirectionLog, parse_log
from pccstream.errors import UserError


def _binned(t: list[float], b: list[int], t0: float, nbins: int, bin_ms: int) -> np.ndarray:
    out = np.zeros(nbins)
    if t:
        idx = ((np.asarray(t) - t0) // bin_ms).astype(np.int64).clip(0, nbins - 1)
        np.add.at(out, idx, np.asarray(b, dtype=np.float64))
    return out * 8 / (bin_ms / 1000.0) / 1e6  # Mbit/s


def plot_log(log_path: str | Path, out: str | Path, bin_ms: int = 500) -> None:
    if bin_ms <= 0:
        raise UserError(f"--bin-ms {bin_ms} is impossible: must be > 0")
    out = Path(out)
    if out.suffix.lower() not in (".png", ".svg"):
        raise UserError(f"--plot {out}: output must end in .png or .svg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parsed = parse_log(log_path)
    dirs = [(DIR_NAMES[d], parsed.dirs[d]) for d in ("d", "u") if d in parsed.dirs]
    if not dirs:
        raise UserError(f"{log_path}: the log has no events")
    fig, axes = plt.subplots(len(dirs), 2, figsize=(14, 4.2 * len(dirs)), squeeze=False)
    for row, (name, dl) in enumerate(dirs):
        _plot_direction(axes[row][0], axes[row][1], name, dl, bin_ms)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _plot_direction(ax_tp, ax_d, name: str, dl: DirectionLog, bin_ms: int) -> None:  # noqa: ANN001
    t0 = dl.first
    nbins = int((dl.last - t0) // bin_ms) + 1
    x = (t0 + (np.arange(nbins) + 0.5) * bin_ms) / 1000.0
    cap = _binned(dl.cap_t, dl.cap_b, t0, nbins, bin_ms)
    ing = _binned(dl.arrivals_t, dl.arrivals_b, t0, nbins, bin_ms)
    dep = _binned(dl.dep_t, dl.dep_b, t0, nbins, bin_ms)
    span = max(dl.last - t0, 1e-9)

    def mean(b: list[int]) -> float:
        return sum(b) * 8 / span / 1000.0

    if dl.cap_b:
        ax_tp.fill_between(x, cap, step="mid", alpha=0.25, color="red",
                           label=f"Capacity (mean {mean(dl.cap_b):.2f} Mbit/s)")
    ax_tp.plot(x, ing, drawstyle="steps-mid", color="#0020a0", lw=2,
               label=f"Traffic ingress (mean {mean(dl.arrivals_b):.2f} Mbit/s)")
    ax_tp.plot(x, dep, drawstyle="steps-mid", color="#ff6040", lw=1.5,
               label=f"Traffic egress (mean {mean(dl.dep_b):.2f} Mbit/s)")
    ax_tp.set_xlabel("time (s)")
    ax_tp.set_ylabel("throughput (Mbit/s)")
    ax_tp.set_title(f"{name}: capacity and throughput ({bin_ms} ms bins)")
    ax_tp.legend(loc="upper center", fontsize=8, ncol=3)
    ax_d.scatter(np.asarray(dl.dep_t) / 1000.0, dl.dep_q, s=1, color="#208020")
    ax_d.set_xlabel("time (s)")
    ax_d.set_ylabel("per-packet queueing delay (ms)")
    ax_d.set_title(f"{name}: per-packet delay")

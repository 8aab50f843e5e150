"""`pccstream report`: one self-contained HTML file (inline SVG figures, no scripts).

Per experiment (scenario, bitrate, viewers): mean and 95 % bootstrap CI per arm of the key
metrics; the paired difference of each arm against the first arm (paired by block, i.e. by
network realization); CDFs; throughput vs p95 queueing delay with 1-sigma ellipses (delay axis
reversed, as in the Remy and Pantheon figures); and one example time series per arm.
"""

from __future__ import annotations

import html
import io
import json
import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from pccstream.ab import stats  # noqa: E402
from pccstream.ab.design import Design, schedule  # noqa: E402
from pccstream.ab.store import Store, telemetry_sessions  # noqa: E402
from pccstream.errors import UserError  # noqa: E402

# Derived per run: dropped / decoded frames (the player's CPU health; pccstream.ab.starvation).
DROPPED_FRAME_RATIO = "dropped_frame_ratio"
# Derived per run: the rate a PCC controller left slow start at (viewer 0's first
# `exit-slow-start` MI) over the viewer's share of the link; how far slow start overshot.
# Read from the compressed telemetry, so `ExperimentView` computes it once per run.
SLOW_START_EXIT = "slow_start_exit_share"
# Derived per run: segments the player asked for only once the one before had arrived, with
# its buffer below the target, over every viewer. The session then had nothing on the link for
# a round trip; a player that prefetches asks for each segment while the previous one
# downloads. A player holding back at a full buffer is not counted.
LATE_SEGMENT_REQUESTS = "late_segment_requests"
# A request sent this close to the buffer target followed a wait for the buffer to drain.
_FULL_BUFFER_MARGIN_S = 0.5


def run_value(run: sqlite3.Row, column: str) -> float | None:
    """A stored column, or a derived one (DROPPED_FRAME_RATIO, SLOW_START_EXIT)."""
    if column == DROPPED_FRAME_RATIO:
        dropped, decoded = run["dropped_frames"], run["decoded_frames"]
        return dropped / decoded if dropped is not None and decoded else None
    if column == SLOW_START_EXIT:
        return slow_start_exit_share(run)
    return run[column]


def late_segment_requests(run: sqlite3.Row, buffer_s: float) -> float | None:
    """How many segments were requested at or after the end of the previous segment's
    download while the buffer was below the player's target `buffer_s` (the design's), over
    every viewer; None: no viewer fetched two segments (live, or too short)."""
    full = buffer_s - _FULL_BUFFER_MARGIN_S
    pairs = late = 0
    for viewer in json.loads(run["viewers_json"] or "[]"):
        segments = sorted(viewer.get("segments") or [], key=lambda s: s["index"])
        for before, after in zip(segments, segments[1:], strict=False):
            pairs += 1
            late += (after["requestedAtMs"] >= before["requestedAtMs"] + before["downloadMs"]
                     and after.get("bufferAtRequestS", 0.0) < full)
    return float(late) if pairs else None


def slow_start_exit_share(run: sqlite3.Row) -> float | None:
    """Viewer 0's slow-start exit rate / (link capacity / viewers); None: no PCC exit."""
    capacity = run["capacity_mbps"]
    sessions = telemetry_sessions(run)
    if not capacity or not sessions:
        return None
    exit_mi = next((e for e in sessions[0] if e.get("type") == "mi"
                    and e.get("decision") == "exit-slow-start"), None)
    if exit_mi is None:
        return None
    viewers = len(json.loads(run["viewers_json"] or "[]")) or 1
    return float(exit_mi["target_rate_bps"]) / 1e6 / (capacity / viewers)


def starved(run: sqlite3.Row) -> bool:
    """The stored flag (pccstream.ab.starvation); unknown (old runs) counts as not starved."""
    return bool(run["cpu_starved"])


@dataclass(frozen=True)
class Metric:
    column: str
    title: str
    unit: str
    scale: float = 1.0
    lower_is_better: bool = True


METRICS: tuple[Metric, ...] = (
    Metric("buffering_ratio", "buffering ratio", "%", 100.0),
    Metric("startup_delay_ms", "startup delay", "ms"),
    Metric("mean_bitrate_kbps", "mean bitrate", "kbit/s", lower_is_better=False),
    Metric("frame_height", "picture height", "px", lower_is_better=False),
    Metric("bitrate_switches", "rendition switches", "count"),
    Metric("throughput_mbps", "throughput", "Mbit/s", lower_is_better=False),
    Metric("p95_queue_delay_ms", "p95 queueing delay", "ms"),
    Metric("p95_signal_delay_ms", "p95 signal delay", "ms"),
    Metric("utilization", "utilization", "%", 100.0, lower_is_better=False),
    Metric("loss_rate", "loss", "%", 100.0),
    Metric("stall_count", "stalls", "count"),
    Metric("freeze_count", "freezes (WebRTC's rule)", "count"),
    Metric("play_seconds", "play time", "s", lower_is_better=False),
    Metric("latency_p50_ms", "p50 glass-to-glass latency", "ms"),
    Metric("latency_p95_ms", "p95 glass-to-glass latency", "ms"),
    Metric("frames_skipped", "frames skipped", "count"),
    Metric("buffering_ratio_with_startup", "buffering ratio incl. startup", "%", 100.0),
    Metric(DROPPED_FRAME_RATIO, "dropped frames", "%", 100.0),
    Metric(SLOW_START_EXIT, "slow-start exit / link share", "x"),
    Metric(LATE_SEGMENT_REQUESTS, "segments requested late", "count"),
)
# The paired table's metrics (live designs add the latencies).
PAIRED_METRICS = ("buffering_ratio", "startup_delay_ms", "mean_bitrate_kbps", "throughput_mbps",
                  "p95_queue_delay_ms", "p95_signal_delay_ms")
CDF_METRICS = ("buffering_ratio", "startup_delay_ms", "throughput_mbps", "p95_queue_delay_ms")
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2")

CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}thead th{background:#f3f3f3}
.note{color:#555;font-size:.9em}.fig svg{max-width:100%;height:auto}
code,pre{background:#f6f6f6;padding:.1em .3em}pre{padding:.6em;overflow-x:auto;font-size:.85em}
.warn{color:#a40}
"""


def _svg(fig: Figure) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _color(index: int) -> str:
    return COLORS[index % len(COLORS)]


class ExperimentView:
    """The runs of one experiment, by arm and block."""

    def __init__(self, store: Store, row: sqlite3.Row) -> None:
        self.row = row
        self.design = Design.from_dict(json.loads(row["design_json"]))
        self.runs = store.runs(self.design.experiment_id)
        self.arms = list(self.design.arms)
        self.total = len(schedule(self.design))
        self._derived: dict[tuple[int, str], float | None] = {}

    def value(self, run: sqlite3.Row, column: str) -> float | None:
        """`run_value`, and LATE_SEGMENT_REQUESTS; the metrics read from a run's JSON
        (SLOW_START_EXIT, LATE_SEGMENT_REQUESTS) are computed once per run."""
        if column not in (SLOW_START_EXIT, LATE_SEGMENT_REQUESTS):
            return run_value(run, column)
        key = (run["id"], column)
        if key not in self._derived:
            self._derived[key] = (
                late_segment_requests(run, self.design.buffer_s)
                if column == LATE_SEGMENT_REQUESTS else run_value(run, column))
        return self._derived[key]

    def values(self, arm: str, column: str, *, healthy_only: bool = False) -> list[float | None]:
        """`healthy_only`: leave out the CPU-starved runs."""
        return [
            self.value(r, column)
            for r in self.runs
            if r["arm"] == arm and not (healthy_only and starved(r))
        ]

    def by_block(self, arm: str, column: str) -> dict[int, float | None]:
        return {r["block"]: self.value(r, column) for r in self.runs if r["arm"] == arm}

    def starved_runs(self, arm: str) -> int | None:
        """CPU-starved runs of the arm; None when no run of it has the flag (old runs)."""
        flags = [r["cpu_starved"] for r in self.runs if r["arm"] == arm]
        if all(flag is None for flag in flags):
            return None
        return sum(1 for flag in flags if flag)

    def starvation_warning(self) -> str | None:
        """One line when any run was CPU-starved, else None."""
        counts = {arm: self.starved_runs(arm) or 0 for arm in self.arms}
        total = sum(counts.values())
        if not total:
            return None
        per_arm = ", ".join(f"{arm} {n}" for arm, n in counts.items() if n)
        reasons = sorted({str(r["cpu_starved_reason"]) for r in self.runs if starved(r)})
        return (
            f"{total} of {len(self.runs)} runs were CPU-starved ({per_arm}): "
            f"{' | '.join(reasons)}. Their figures measure the machine, not the controller; "
            "the means are also given without them."
        )

    def hosts(self) -> dict[str, tuple[int, str | None]]:
        """Runs per worker host, with its CPU model (runs stored before hosts were: none)."""
        out: dict[str, tuple[int, str | None]] = {}
        for run in self.runs:
            host = run["worker_host"]
            if host:
                count, _ = out.get(host, (0, None))
                out[host] = (count + 1, run["cpu_model"])
        return out

    def hosts_table(self) -> tuple[list[str], list[list[str]]]:
        """The worker host of every run: a row per block, a column per arm."""
        cells = {(r["block"], r["arm"]): r["worker_host"] or "?" for r in self.runs}
        blocks = sorted({block for block, _ in cells})
        rows = [
            [str(block + 1), *(cells.get((block, arm), "") for arm in self.arms)]
            for block in blocks
        ]
        return ["block", *self.arms], rows

    def split_blocks(self) -> list[int]:
        """Blocks whose arms ran on more than one host (e.g. a lost worker's re-run)."""
        hosts: dict[int, set[str]] = {}
        for run in self.runs:
            if run["worker_host"]:
                hosts.setdefault(run["block"], set()).add(run["worker_host"])
        return sorted(block for block, names in hosts.items() if len(names) > 1)

    def host_warning(self) -> str | None:
        split = self.split_blocks()
        if not split:
            return None
        return (
            f"{len(split)} block(s) ran their arms on different hosts (block "
            f"{', '.join(str(b + 1) for b in split)}): their paired differences compare "
            "machines as well as controllers."
        )

    def example(self, arm: str) -> sqlite3.Row | None:
        runs = [r for r in self.runs if r["arm"] == arm]
        return min(runs, key=lambda r: r["block"]) if runs else None


def summary_table(
    view: ExperimentView, seed: int, resamples: int, *, healthy_only: bool = False
) -> tuple[list[str], list[list[str]]]:
    """Mean [CI] per arm; `healthy_only` leaves out the CPU-starved runs."""
    header = ["arm", "runs", "CPU-starved", *(f"{m.title} ({m.unit})" for m in METRICS)]
    rows = []
    for arm in view.arms:
        starved_runs = view.starved_runs(arm)
        cells = [
            arm,
            str(len(view.values(arm, "wall_s", healthy_only=healthy_only))),
            "n/a" if starved_runs is None else str(0 if healthy_only else starved_runs),
        ]
        for metric in METRICS:
            est = stats.bootstrap_ci(
                view.values(arm, metric.column, healthy_only=healthy_only),
                seed=seed,
                resamples=resamples,
            )
            cells.append(est.format(metric.scale))
        rows.append(cells)
    return header, rows


def paired_table(
    view: ExperimentView, seed: int, resamples: int, baseline: str | None = None
) -> tuple[list[str], list[list[str]]]:
    """Every other arm against `baseline` (default: the design's first arm), block by block."""
    baseline = view.arms[0] if baseline is None else baseline
    header = [
        "metric",
        "arm",
        "pairs",
        f"arm − {baseline} [95 % CI]",
        f"arm / {baseline} − 1 [95 % CI]",
        f"{baseline} / arm − 1 [95 % CI]",
    ]
    rows = []
    # Live designs: glass-to-glass latency is the point of the comparison, with the stalls
    # (ours: under one frame buffered) and the freezes by WebRTC's rule beside them.
    latency = [m for m in METRICS if m.column.startswith("latency_")
               and any(v is not None for v in view.values(baseline, m.column))]
    if latency:
        latency += [m for m in METRICS if m.column in ("stall_count", "freeze_count")
                    and any(v is not None for v in view.values(baseline, m.column))]
    paired = [m for m in METRICS if m.column in PAIRED_METRICS]
    for metric in [*paired, *latency]:
        base = view.by_block(baseline, metric.column)
        for arm in (a for a in view.arms if a != baseline):
            other = view.by_block(arm, metric.column)
            forward = stats.paired_difference(base, other, seed=seed, resamples=resamples)
            backward = stats.paired_difference(other, base, seed=seed, resamples=resamples)
            rows.append(
                [
                    f"{metric.title} ({metric.unit})",
                    arm,
                    str(len(forward.blocks)),
                    forward.mean_difference.format(metric.scale),
                    _percent(forward.relative_change),
                    _percent(backward.relative_change),
                ]
            )
    return header, rows


def _percent(est: stats.Estimate) -> str:
    return est.format(100.0) + (" %" if est.value is not None else "")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def cdf_figure(view: ExperimentView) -> str:
    fig, axes = plt.subplots(1, len(CDF_METRICS), figsize=(3.2 * len(CDF_METRICS), 2.8))
    by_column = {m.column: m for m in METRICS}
    for ax, column in zip(axes, CDF_METRICS, strict=True):
        metric = by_column[column]
        for i, arm in enumerate(view.arms):
            xs, ys = stats.ecdf(view.values(arm, column))
            if xs:
                xs = [x * metric.scale for x in xs]
                ax.step([xs[0], *xs], [0.0, *ys], where="post", color=_color(i), label=arm)
        ax.set_xlabel(f"{metric.title} ({metric.unit})")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("CDF over runs")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return _svg(fig)


def scatter_figure(view: ExperimentView) -> str:
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, arm in enumerate(view.arms):
        pairs = [
            (r["p95_queue_delay_ms"], r["throughput_mbps"])
            for r in view.runs
            if r["arm"] == arm
            and r["p95_queue_delay_ms"] is not None
            and r["throughput_mbps"] is not None
        ]
        if not pairs:
            continue
        xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
        ax.scatter(xs, ys, color=_color(i), s=18, alpha=0.7, label=arm)
        ellipse = stats.covariance_ellipse(xs, ys)
        if ellipse is not None:
            ax.plot(ellipse[0], ellipse[1], color=_color(i), lw=1.2)
        ax.plot([sum(xs) / len(xs)], [sum(ys) / len(ys)], marker="x", color=_color(i), ms=8)
    ax.invert_xaxis()
    ax.set_xlabel("p95 queueing delay (ms) — better →")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title("throughput vs delay, 1-σ ellipses", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _svg(fig)


def _stall_spans(points: list[dict[str, Any]]) -> list[tuple[float, float]]:
    spans = []
    start = None
    for point in points:
        stalled = point.get("state") == "stalled"
        if stalled and start is None:
            start = point["t_s"]
        elif not stalled and start is not None:
            spans.append((start, point["t_s"]))
            start = None
    if start is not None and points:
        spans.append((start, points[-1]["t_s"]))
    return spans


def timeseries_figure(run: sqlite3.Row, color: str) -> str:
    series = json.loads(run["series_json"])
    player = series["player"][0] if series.get("player") else []
    link = series.get("link") or {}
    sessions = telemetry_sessions(run)
    samples = [r for r in sessions[0] if r.get("type") == "sample"] if sessions else []
    fig, axes = plt.subplots(3, 1, figsize=(9, 5.6), sharex=True)
    ax_rate, ax_rtt, ax_buf = axes
    if link.get("t_s"):
        ax_rate.plot(link["t_s"], link["capacity_mbps"], color="#999", lw=1, label="capacity")
        ax_rate.plot(
            link["t_s"], link["throughput_mbps"], color=color, lw=1.2, label="bottleneck throughput"
        )
    if samples:
        t = [s["t_ms"] / 1000 for s in samples]
        ax_rate.plot(
            t,
            [(s.get("pacing_rate_bps") or 0) / 1e6 for s in samples],
            color="k",
            lw=0.8,
            ls="--",
            label="pacing rate (viewer 1)",
        )
        ax_rtt.plot(t, [s.get("srtt_ms") for s in samples], color=color, lw=1, label="srtt")
        ax_rtt.plot(
            t,
            [s.get("latest_rtt_ms") for s in samples],
            color="k",
            lw=0.6,
            alpha=0.5,
            label="latest RTT",
        )
        ax_rtt.legend(fontsize=7, loc="upper right")
    capacity = [c for c in link.get("capacity_mbps") or [] if c]
    if capacity:  # a start-up pacing spike must not flatten the plot
        ax_rate.set_ylim(0, 2.0 * max(capacity))
    ax_rate.set_ylabel("Mbit/s")
    ax_rate.legend(fontsize=7, loc="upper right")
    ax_rtt.set_ylabel("RTT (ms)")
    if player:
        ax_buf.plot(
            [p["t_s"] for p in player],
            [p.get("buffer_s") or 0 for p in player],
            color=color,
            lw=1.2,
            label="buffer (viewer 1)",
        )
        for i, (a, b) in enumerate(_stall_spans(player)):
            ax_buf.axvspan(a, b, color="#d62728", alpha=0.25, label="stall" if i == 0 else None)
        ax_buf.legend(fontsize=7, loc="upper right")
    ax_buf.set_ylabel("buffer (s)")
    ax_buf.set_xlabel("time since the page opened (s); telemetry time since the session began")
    for ax in axes:
        ax.grid(alpha=0.3)
    _title(ax_rate, f"{run['arm']} — block {run['block'] + 1}, network seed {run['network_seed']}")
    fig.tight_layout()
    return _svg(fig)


def _title(ax: Axes, text: str) -> None:
    ax.set_title(text, fontsize=10)


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:.{digits}g}"


def _emulator_lateness_text(runs: Sequence[Any]) -> str:
    """The emulator's timer lateness over the runs (runs stored before it was: none)."""
    shares = [r["emulator_late_share"] for r in runs if r["emulator_late_share"] is not None]
    longest = [r["emulator_late_max_ms"] for r in runs if r["emulator_late_max_ms"] is not None]
    if not shares:
        return ""
    return (
        f" The real-time emulator's timers fired over 1 ms late (a host stall, or the emulator "
        f"short of CPU) for a mean {_fmt(100 * sum(shares) / len(shares))} % of a run, max "
        f"{_fmt(100 * max(shares))} %; the latest by {_fmt(max(longest) if longest else None)} ms."
    )


def experiment_section(
    view: ExperimentView, seed: int, resamples: int, baseline: str | None = None
) -> str:
    design = view.design
    parts = [f"<h2>{html.escape(design.scenario_label)}</h2>"]
    done = len(view.runs)
    status = "complete" if done == view.total else f"<span class=warn>incomplete: {done}</span>"
    overheads = [r["overhead_s"] for r in view.runs if r["overhead_s"] is not None]
    loads = [json.loads(r["config_json"]).get("loadavg_start", [None])[0] for r in view.runs]
    loads = [x for x in loads if x is not None]
    load_text = (
        f" CPU load at run start (1-min load average): mean {_fmt(_mean(loads))}, max "
        f"{_fmt(max(loads))}."
        if loads
        else ""
    )
    load_text += _emulator_lateness_text(view.runs)
    sources = {json.loads(r["versions_json"]).get("source_sha256") for r in view.runs}
    if len(sources) > 1:
        load_text += (
            f" <span class=warn>The server's source changed during the experiment: "
            f"{len(sources)} versions ({', '.join(sorted(str(x) for x in sources))}).</span>"
        )
    errors = sum(r["player_errors"] or 0 for r in view.runs)
    not_ended = sum(1 for r in view.runs if not r["ended"])
    parts.append(
        f"<p>Experiment <code>{design.experiment_id}</code>: arms {', '.join(view.arms)}; "
        f"{design.runs} blocks × {len(view.arms)} arms = {view.total} runs ({status}); "
        f"{design.duration_s:g} s per run, {design.viewers} viewer(s), mode {design.mode}, "
        f"buffer target {design.buffer_s:g} s, seed {design.seed}. Per-run overhead (setup + "
        f"teardown beyond playback): mean {_fmt(_mean(overheads))} s, max "
        f"{_fmt(max(overheads) if overheads else None)} s. Viewer errors: {errors}. Runs whose "
        f"video ended before the run did: {not_ended}.{load_text}</p>"
    )
    if view.row["command"]:
        parts.append(f"<pre>{html.escape(view.row['command'])}</pre>")
    if not view.runs:
        parts.append("<p>No runs stored yet.</p>")
        return "\n".join(parts)
    hosts = view.hosts()
    if hosts:
        listed = "; ".join(
            f"{html.escape(host)} ({count} runs, {html.escape(model or 'CPU unknown')})"
            for host, (count, model) in sorted(hosts.items())
        )
        parts.append(f"<p>Hosts: {listed}.</p>")
        host_warning = view.host_warning()
        if host_warning is not None:
            parts.append(f"<p class=warn>{html.escape(host_warning)}</p>")
        parts.append("<details><summary>Worker host of every run</summary>")
        parts.append(_table(*view.hosts_table()) + "</details>")
    header, rows = summary_table(view, seed, resamples)
    parts.append("<h3>Mean per arm [95 % bootstrap CI]</h3>")
    parts.append(
        "<p class=note>Player metrics are the mean over the run's viewers; link metrics are "
        "the emulator's downlink (the shared bottleneck). Percentile bootstrap over runs, "
        f"{resamples} resamples. CPU-starved: runs the starvation rule flagged (docs/ab.md); "
        "dropped frames: dropped / decoded frames of the run.</p>"
    )
    parts.append(_table(header, rows))
    warning = view.starvation_warning()
    if warning is not None:
        parts.append(f"<p class=warn>{html.escape(warning)}</p>")
        parts.append("<h3>Mean per arm without the CPU-starved runs [95 % bootstrap CI]</h3>")
        parts.append(_table(*summary_table(view, seed, resamples, healthy_only=True)))
    if len(view.arms) > 1:
        header, rows = paired_table(view, seed, resamples, baseline)
        parts.append(f"<h3>Paired differences against {html.escape(baseline or view.arms[0])}</h3>")
        parts.append(
            "<p class=note>Pairs are the runs of one block (the same network realization). "
            "Relative changes are ratios of the means over the paired blocks, with a CI from "
            "resampling blocks. A negative last column means the baseline is lower.</p>"
        )
        parts.append(_table(header, rows))
    parts.append("<h3>CDFs over runs</h3>")
    parts.append(f"<div class=fig>{cdf_figure(view)}</div>")
    parts.append("<h3>Throughput vs delay</h3>")
    parts.append(f"<div class=fig>{scatter_figure(view)}</div>")
    parts.append("<h3>Example time series (first block of each arm)</h3>")
    for i, arm in enumerate(view.arms):
        run = view.example(arm)
        if run is not None:
            parts.append(f"<div class=fig>{timeseries_figure(run, _color(i))}</div>")
    first = view.runs[0]
    parts.append("<details><summary>Configuration and versions (first run)</summary>")
    config = json.loads(first["config_json"])
    versions = json.loads(first["versions_json"])
    parts.append(f"<pre>{html.escape(json.dumps(config, indent=2))}</pre>")
    parts.append(f"<pre>{html.escape(json.dumps(versions, indent=2))}</pre></details>")
    return "\n".join(parts)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def check_baseline(store: Store, baseline: str | None) -> None:
    """A baseline arm must be an arm of every experiment in the database (one clear line)."""
    if baseline is None:
        return
    for row in store.experiments():
        view = ExperimentView(store, row)
        if baseline not in view.arms:
            raise UserError(
                f"--baseline {baseline}: not an arm of experiment {view.design.experiment_id} "
                f"in {store.path} (its arms: {', '.join(view.arms)})"
            )


def render(
    store: Store, *, title: str, seed: int | None = None, resamples: int = 10_000,
    baseline: str | None = None,
) -> str:
    seed = stats.DEFAULT_SEED if seed is None else seed
    check_baseline(store, baseline)
    plt.rcParams["svg.fonttype"] = "none"
    plt.rcParams["svg.hashsalt"] = "pccstream"
    views = [ExperimentView(store, row) for row in store.experiments()]
    body = [f"<h1>{html.escape(title)}</h1>"]
    body.append(
        f"<p class=note>Database <code>{html.escape(str(store.path))}</code>: "
        f"{len(views)} experiment(s), {sum(len(v.runs) for v in views)} runs.</p>"
    )
    if not views:
        body.append("<p>No experiments in this database.</p>")
    for view in views:
        body.append(experiment_section(view, seed, resamples, baseline))
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def write_report(
    store: Store, out: Path, *, title: str, seed: int | None = None, resamples: int = 10_000,
    baseline: str | None = None,
) -> None:
    html_text = render(store, title=title, seed=seed, resamples=resamples, baseline=baseline)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html_text, encoding="utf-8")


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def markdown_tables(
    store: Store, *, seed: int | None = None, resamples: int = 10_000, baseline: str | None = None
) -> str:
    """The report's tables as Markdown (for notes and docs/results)."""
    seed = stats.DEFAULT_SEED if seed is None else seed
    check_baseline(store, baseline)
    out = []
    for row in store.experiments():
        view = ExperimentView(store, row)
        out.append(f"### {view.design.scenario_label}\n")
        out.append(
            f"Experiment `{view.design.experiment_id}`, {len(view.runs)}/{view.total} runs, "
            f"{view.design.duration_s:g} s each, {view.design.viewers} viewer(s). "
            "Mean [95 % bootstrap CI] over runs.\n"
        )
        if not view.runs:
            continue
        out.append(_markdown_table(*summary_table(view, seed, resamples)) + "\n")
        host_warning = view.host_warning()
        if host_warning is not None:
            out.append(f"**Warning:** {host_warning}\n")
        warning = view.starvation_warning()
        if warning is not None:
            out.append(f"**Warning:** {warning}\n")
            out.append("Without the CPU-starved runs:\n")
            table = summary_table(view, seed, resamples, healthy_only=True)
            out.append(_markdown_table(*table) + "\n")
        if len(view.arms) > 1:
            out.append(f"Paired by block against {baseline or view.arms[0]}:\n")
            out.append(_markdown_table(*paired_table(view, seed, resamples, baseline)) + "\n")
    return "\n".join(out)

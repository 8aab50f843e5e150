"""`pccstream ab decisions`: what a PCC arm's monitor intervals decided, from stored telemetry.

Every run of the arm in the databases contributes its MIs that finished after `skip_s`
(slow start is its own story), with rates as shares of the run's link capacity:

* per verdict: MIs per second of run, the mean step and the mean target rate, and the share
  of MIs whose RTT gradient counted (passed the filter and the noise test);
* per band of send rate / capacity: how many MIs, and the share whose gradient counted. Above
  capacity that share is how often a queue of ours is seen within one MI; below it, how often
  noise passes for a queue.

Only the ab store's telemetry is read, so it works on any results database, old or new.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pccstream.ab.store import open_store, telemetry_sessions
from pccstream.errors import UserError

# Width of a send-rate band, as a share of capacity.
BAND = 0.05
# MIs above this multiple of capacity share the last band.
TOP_BAND = 1.25


@dataclass(frozen=True)
class VerdictRow:
    verdict: str
    mis: int
    per_s: float
    mean_step: float  # signed rate change / capacity
    mean_target: float  # target rate / capacity
    counted_gradient: float  # share of these MIs with an RTT gradient that counted


@dataclass(frozen=True)
class BandRow:
    low: float  # send rate / capacity, lower edge
    high: float
    mis: int
    counted_gradient: float


@dataclass(frozen=True)
class Decisions:
    arm: str
    runs: int
    seconds: float
    verdicts: list[VerdictRow]
    bands: list[BandRow]


@dataclass
class _Acc:
    n: int = 0
    step: float = 0.0
    target: float = 0.0
    counted: int = 0


def _run_mis(run: Any, skip_s: float) -> tuple[float, list[dict[str, Any]]]:
    """The run's downlink capacity (bit/s) and the MI records of all its sessions (every
    viewer's: with several, their rates are shares of the link they share) after `skip_s`."""
    link = json.loads(run["link_json"] or "{}").get("down", {})
    capacity = float(link.get("capacity_mbps") or 0.0) * 1e6
    mis = [e for session in telemetry_sessions(run) for e in session
           if e.get("type") == "mi" and float(e.get("t_ms", 0.0)) >= skip_s * 1000]
    return capacity, mis


def _tally(mis: list[dict[str, Any]], capacity: float, verdicts: dict[str, _Acc],
           bands: dict[int, list[int]]) -> None:
    """Add one run's MIs to the per-verdict sums and the per-band counts."""
    for e in mis:
        verdict = str(e.get("decision") or "none").split(":")[0]
        counted = float(e.get("rtt_gradient") or 0.0) > 0
        acc = verdicts[verdict]
        acc.n += 1
        acc.step += float(e.get("step_bps") or 0.0) / capacity
        acc.target += float(e.get("target_rate_bps") or 0.0) / capacity
        acc.counted += counted
        # Superseded MIs and ones without an RTT sample measured nothing.
        if verdict == "stale" or not float(e.get("rtt_ms") or 0.0):
            continue
        share = min(float(e.get("send_rate_bps") or 0.0) / capacity, TOP_BAND)
        band = bands[min(int(share / BAND), int(TOP_BAND / BAND) - 1)]
        band[0] += 1
        band[1] += counted


def summarize(paths: Sequence[str | Path], arm: str, *, skip_s: float = 10.0) -> Decisions:
    """The decisions of every run of `arm` in the databases at `paths`."""
    if skip_s < 0 or not math.isfinite(skip_s):
        raise UserError(f"--skip-s {skip_s}: expected a number of seconds >= 0")
    verdicts: dict[str, _Acc] = defaultdict(_Acc)
    bands: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    runs, seconds = 0, 0.0
    arms_seen: set[str] = set()
    for path in paths:
        with open_store(path, read_only=True) as store:
            for run in store.runs():
                arms_seen.add(run["arm"])
                if run["arm"] != arm:
                    continue
                capacity, mis = _run_mis(run, skip_s)
                if capacity <= 0 or not mis:
                    continue
                runs += 1
                times = [float(e["t_ms"]) for e in mis]
                seconds += (max(times) - min(times)) / 1000
                _tally(mis, capacity, verdicts, bands)
    if runs == 0:
        known = ", ".join(sorted(arms_seen)) or "none"
        raise UserError(f"--arm {arm}: no run of it with MI telemetry in "
                        f"{', '.join(map(str, paths))} (arms: {known})")
    rows = [VerdictRow(v, a.n, a.n / seconds if seconds > 0 else 0.0, a.step / a.n,
                       a.target / a.n, a.counted / a.n)
            for v, a in sorted(verdicts.items(), key=lambda kv: -kv[1].n)]
    band_rows = [BandRow(round(i * BAND, 2), round((i + 1) * BAND, 2), n, k / n)
                 for i, (n, k) in sorted(bands.items())]
    return Decisions(arm, runs, seconds, rows, band_rows)


def markdown(d: Decisions) -> str:
    lines = [f"### {d.arm}: {d.runs} runs, {d.seconds:.0f} s of MIs", "",
             "| verdict | MIs | per s | mean step / capacity | mean target / capacity "
             "| RTT gradient counted |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r.verdict} | {r.mis} | {r.per_s:.2f} | {r.mean_step:+.4f} | "
              f"{r.mean_target:.3f} | {r.counted_gradient:.1%} |" for r in d.verdicts]
    lines += ["", "MIs that measured (not `stale`, with an RTT sample) by send rate / capacity "
              f"(the last band holds everything above {TOP_BAND:g}):", "",
              "| send / capacity | MIs | RTT gradient counted |", "| --- | --- | --- |"]
    lines += [f"| {b.low:.2f}–{b.high:.2f} | {b.mis} | {b.counted_gradient:.1%} |"
              for b in d.bands]
    return "\n".join(lines) + "\n"


def to_json(d: Decisions) -> dict[str, Any]:
    return asdict(d)

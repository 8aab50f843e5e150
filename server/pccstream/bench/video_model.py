"""python -m pccstream.bench.video_model: the thesis's video figures on the link model, as JSON.

`fig51` is `cc.sim.scenario_video` (one viewer, RTT redrawn every 5 s, 300 kB queue) and
`fig52` is `cc.sim.scenario_viewers` (three viewers on a 75 kB queue, 100 ms). Every arm runs
on the same seeds, so seed i of two arms is one network realization: the paired differences
against the first arm use `ab.stats.paired_difference` as the browser A/B report does.
Simulation figures, not measurements: they say which way a change moves the controller, and
the real stack (`pccstream ab`) says by how much.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ..ab.stats import Estimate, bootstrap_ci, paired_difference
from ..cc.registry import check_cc_spec, split_cc_spec
from ..cc.sim import VIEWER_STAGGER_S, WIRE_PAYLOAD_SHARE, scenario_video, scenario_viewers
from ..errors import UserError

FIGURES = ("fig51", "fig52")
DEFAULT_BITRATE_MBPS = {"fig51": 15.0, "fig52": 8.0}


@dataclasses.dataclass(frozen=True)
class Setup:
    figure: str
    bitrate_mbps: float
    duration_s: float
    stagger_s: float | None  # fig52 only: Fig. 5.1 has one viewer
    start_jitter_s: float | None  # fig52 only
    prefetch: bool
    payload_share: float


@dataclasses.dataclass(frozen=True)
class SeedResult:
    buffering_pct: float
    worst_viewer_pct: float
    utilization: float
    startup_s: float
    loss_pct: float
    p95_queue_ms: float


def run_seed(setup: Setup, arm: str, seed: int) -> SeedResult:
    name, params = split_cc_spec(arm)
    if setup.figure == "fig51":
        video = scenario_video(name, bitrate_mbps=setup.bitrate_mbps, seed=seed,
                               duration=setup.duration_s, params=params, prefetch=setup.prefetch,
                               payload_share=setup.payload_share)
        pct = video.buffering_ratio * 100
        return SeedResult(pct, pct, video.utilization, video.startup_s, video.loss_rate * 100,
                          video.p95_queue_delay_ms)
    stagger_s = VIEWER_STAGGER_S if setup.stagger_s is None else setup.stagger_s
    viewers = scenario_viewers(name, bitrate_mbps=setup.bitrate_mbps, seed=seed,
                               duration=setup.duration_s, stagger_s=stagger_s,
                               start_jitter_s=setup.start_jitter_s or 0.0,
                               params=params, prefetch=setup.prefetch,
                               payload_share=setup.payload_share)
    return SeedResult(viewers.buffering_ratio * 100, max(viewers.buffering_ratios) * 100,
                      viewers.utilization, max(viewers.startups_s), viewers.loss_rate * 100,
                      viewers.p95_queue_delay_ms)


def _job(job: tuple[Setup, str, int]) -> SeedResult:
    return run_seed(*job)


def _estimate(e: Estimate) -> dict[str, float | None]:
    return {"mean": e.value, "low": e.low, "high": e.high}


def summarize(arms: Sequence[str], seeds: Sequence[int],
              results: dict[tuple[str, int], SeedResult]) -> list[dict[str, Any]]:
    """Per arm: means with bootstrap CIs over seeds, and the paired difference of the
    buffering ratio against the first arm."""
    base = {s: results[(arms[0], s)].buffering_pct for s in seeds}
    rows = []
    for arm in arms:
        own = [results[(arm, s)] for s in seeds]
        buffering = [r.buffering_pct for r in own]
        diff = paired_difference(base, {s: results[(arm, s)].buffering_pct for s in seeds})
        rows.append({
            "arm": arm,
            "buffering_pct": _estimate(bootstrap_ci(buffering)),
            "buffering_median_pct": statistics.median(buffering),
            "worst_viewer_pct": statistics.mean(r.worst_viewer_pct for r in own),
            "utilization": statistics.mean(r.utilization for r in own),
            "startup_s": statistics.mean(r.startup_s for r in own),
            "loss_pct": statistics.mean(r.loss_pct for r in own),
            "p95_queue_ms": statistics.mean(r.p95_queue_ms for r in own),
            f"minus_{arms[0]}_pct": _estimate(diff.mean_difference),
            "per_seed_pct": buffering,
        })
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="the thesis's video figures on the link model")
    parser.add_argument("figure", choices=FIGURES)
    parser.add_argument("--arms", nargs="+", default=["vivace", "bbr", "cubic"],
                        metavar="NAME[:KEY=VALUE...]", help="the first is the paired baseline")
    parser.add_argument("--seeds", type=int, default=20, help="seeds 1..N (default 20)")
    parser.add_argument("--bitrate", type=float, default=None, metavar="MBPS",
                        help="per viewer (default: 15 for fig51, 8 for fig52)")
    parser.add_argument("--duration", type=float, default=60.0, metavar="S")
    parser.add_argument("--stagger", type=float, default=None, metavar="S",
                        help=f"fig52: seconds between the viewers' starts (default "
                             f"{VIEWER_STAGGER_S}, the harness's median)")
    parser.add_argument("--start-jitter", type=float, default=None, metavar="S",
                        help="fig52: each viewer starts a further uniform 0..S s late, drawn "
                             "per seed (with --stagger 0 the viewers open in a random order, "
                             "as on a fast host: within about 0.025 s)")
    parser.add_argument("--no-prefetch", action="store_true",
                        help="one request per segment (the player's prefetch=0)")
    parser.add_argument("--payload-share", type=float, default=WIRE_PAYLOAD_SHARE, metavar="F",
                        help=f"share of the wire bytes that carry media (default "
                             f"{WIRE_PAYLOAD_SHARE:.3f}: 1200-byte QUIC datagrams; 1 = none "
                             f"lost to headers)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.jobs < 1 or args.duration <= 0:
        parser.error("--seeds and --jobs must be at least 1, --duration positive")
    for flag, value in (("--stagger", args.stagger), ("--start-jitter", args.start_jitter)):
        if value is not None and args.figure != "fig52":
            parser.error(f"{flag} applies to fig52 only (fig51 has one viewer)")
        if value is not None and value < 0:
            parser.error(f"{flag} must not be negative, got {value}")
    stagger = None
    if args.figure == "fig52":
        stagger = VIEWER_STAGGER_S if args.stagger is None else args.stagger
    if not 0 < args.payload_share <= 1:
        parser.error(f"--payload-share must be in (0, 1], got {args.payload_share}")
    arms: list[str] = args.arms
    try:
        for spec in arms:
            check_cc_spec(spec)
    except UserError as exc:
        parser.error(f"--arms: {exc}")
    setup = Setup(args.figure, args.bitrate or DEFAULT_BITRATE_MBPS[args.figure], args.duration,
                  stagger, args.start_jitter, not args.no_prefetch, args.payload_share)
    seeds = list(range(1, args.seeds + 1))
    jobs = [(setup, arm, seed) for arm in arms for seed in seeds]
    with ProcessPoolExecutor(args.jobs) as pool:
        outcomes = list(pool.map(_job, jobs))
    results = {(arm, seed): r for (_, arm, seed), r in zip(jobs, outcomes, strict=True)}
    print(json.dumps({"setup": dataclasses.asdict(setup), "seeds": len(seeds),
                      "arms": summarize(arms, seeds, results)}, indent=1))


if __name__ == "__main__":
    main()

"""`pccstream ab` (run / resume / export / pool A/B experiments) and `pccstream report`."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import shlex
import subprocess
import sys
from pathlib import Path

from pccstream.ab.design import Design, default_ladder, parse_arms, resolve_scenario, schedule
from pccstream.ab.export import EXPORT_FORMATS, export_runs, segments_path
from pccstream.ab.store import Store, open_store
from pccstream.cli_conventions import (
    add_bitrate,
    add_cc,
    add_log_dir,
    add_max_load,
    add_scenario,
    add_seed,
    deprecated_alias,
    parse_kbps_list,
    parse_param,
    sigterm_interrupts,
)
from pccstream.errors import Interrupted, UserError
from pccstream.media.package import made_by_this_encoder
from pccstream.media.recipes import named_media
from pccstream.paths import cache_dir as work_cache_dir
from pccstream.paths import stale_web_build

MEDIA_MARGIN_S = 8.0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "ab",
        help="randomized, resumable A/B browser experiments of congestion controllers",
        description=(
            "Run every arm (controller) once per block, in a random order, on the same network "
            "realization; K headless Chromium viewers play through the emulator for S seconds "
            "per run. Each finished run is committed to SQLite; --resume continues."
        ),
    )
    add_cc(
        p,
        help_extra="the first is the baseline of paired differences; with --mode live, "
        "webrtc is the WebRTC arm; player.KEY=VALUE sets a player URL parameter for that arm "
        "only (e.g. vivace:player.fec=8)",
    )
    deprecated_alias(p, "--arms", new="--cc", dest="cc")
    add_scenario(
        p,
        help_extra="`none`: no emulator, the player dials the server directly on loopback; "
        "--bitrate and --viewers fill the scenario's bitrate_kbps and viewers "
        "when it declares them",
    )
    deprecated_alias(
        p, "--scenario-param", new="--param", dest="param", convert=parse_param, append=True
    )
    p.add_argument("--runs", type=int, default=5, help="blocks (runs per arm), default 5")
    p.add_argument(
        "--duration",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds of playback per run (default 60)",
    )
    p.add_argument(
        "--mode",
        choices=["fixed", "abr", "live"],
        default="fixed",
        help="fixed/abr: video on demand; live: the server's live channel (--live-media), "
        "arms may include webrtc",
    )
    add_bitrate(
        p,
        help="video bitrate (fixed mode, default 3000; live mode, default 2500: a rendition "
        "of the live media)",
    )
    p.add_argument(
        "--latency",
        type=int,
        metavar="MS",
        help="live mode: the player's target latency, ms (default 1000)",
    )
    p.add_argument(
        "--abr",
        action="store_true",
        help="live mode: the player's live ABR (docs/live.md) picks each group's rendition "
        "up to --bitrate (the ladder cap; the webrtc arm gets the same maximum bitrate)",
    )
    p.add_argument(
        "--live-media",
        metavar="DIR",
        help="live mode: the live channel's media (default media/live, made by the bootstrap)",
    )
    p.add_argument(
        "--buffer",
        type=float,
        default=10.0,
        metavar="S",
        help="player buffer target, seconds (default 10)",
    )
    p.add_argument(
        "--viewers",
        type=int,
        default=1,
        metavar="K",
        help="viewers sharing the bottleneck (default 1)",
    )
    p.add_argument(
        "--player",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra player URL parameter (repeatable; part of the design), e.g. "
        "startRendition=abr",
    )
    p.add_argument(
        "--datagram-size",
        type=int,
        metavar="BYTES",
        help="the server's largest UDP payload (part of the design; default: the server's, "
        "1200): 1452 gives an emulated Ethernet path Ethernet-sized packets",
    )
    add_seed(p, help="schedule and network seed (default 1)")
    p.add_argument(
        "--db",
        default="results.sqlite",
        metavar="FILE",
        help="SQLite results file (default results.sqlite)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue this experiment (same flags), or with no --cc/--scenario the "
        "last unfinished one in --db; with a larger --runs, the runs of the same design's "
        "stored blocks are adopted, not re-run (extend an experiment with more blocks)",
    )
    p.add_argument(
        "--media",
        metavar="DIR",
        help="media directory (default: made with `pccstream media synth` into "
        ".cache/media and reused)",
    )
    p.add_argument(
        "--ladder",
        metavar="KBPS,...",
        help="renditions (kbit/s, k/M suffixes accepted) of the generated media (default: "
        "the bitrate in fixed mode, a 4-step ladder in abr mode)",
    )
    add_max_load(p)
    p.add_argument(
        "--cluster",
        metavar="tcp://HOST:8786|local:N",
        help="run the blocks as tasks on a Dask cluster (a scheduler's address, or local:N "
        "for N local workers); this process stores the runs (docs/cluster.md)",
    )
    add_log_dir(p, "keep the emulator's packet logs here")
    deprecated_alias(p, "--keep-logs", new="--log-dir", dest="log_dir", convert=Path)
    deprecated_alias(
        p, "--export", new="pccstream ab export --format FMT", dest="export",
        convert=_export_format,
    )
    p.add_argument("--out", metavar="FILE", help=argparse.SUPPRESS)
    p.set_defaults(func=_ab, export=None)

    sub = p.add_subparsers(dest="ab_command", metavar="SUBCOMMAND")
    e = sub.add_parser(
        "export",
        help="the runs of a results database as flat tables (no experiment is run)",
        description="Writes OUT (one row per run: every design field, prefixed design_, and "
        "every scalar run column) and OUT.segments (one row per downloaded segment per "
        "viewer). Lists are JSON text in CSV.",
    )
    # SUPPRESS: `pccstream ab --db F export` (the flag before the subcommand) still counts.
    e.add_argument(
        "--db", default=argparse.SUPPRESS, metavar="FILE",
        help="SQLite results file (default results.sqlite)",
    )
    e.add_argument("--format", choices=EXPORT_FORMATS, default="csv", help="default csv")
    e.add_argument(
        "--out", metavar="FILE", default=argparse.SUPPRESS,
        help="runs table (default: the database's name with the format's suffix); the "
        "segments table goes beside it as NAME.segments.SUFFIX",
    )
    e.set_defaults(func=_export)

    o = sub.add_parser(
        "pool",
        help="one paired comparison over the blocks of several campaigns (no experiment is run)",
        description="Pools the per-block differences ARM − OTHER of every experiment in the "
        "databases that ran both arms, and prints each campaign's pairs and the pooled mean "
        "with its 95 % bootstrap CI. Campaigns must share the setup (scenario, parameters, "
        "mode, bitrate, viewers, duration); two with one seed repeat the same networks and "
        "are flagged.",
    )
    o.add_argument("dbs", nargs="+", metavar="RESULTS.sqlite")
    o.add_argument("--arm", required=True, metavar="ARM",
                   help="arm label; A|B takes the first of the two that a campaign ran")
    o.add_argument("--against", required=True, action="append", metavar="OTHER",
                   help="the arm compared with (repeat for several comparisons)")
    o.add_argument("--metric", default="buffering_ratio", help="run metric (default: %(default)s)")
    o.add_argument("--drop-starved", action="store_true",
                   help="leave out the blocks where either arm's run was CPU-starved")
    o.add_argument("--mixed", action="store_true",
                   help="pool campaigns of different setups anyway")
    o.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    o.add_argument("--seed", type=int, default=None, help="bootstrap seed (default fixed)")
    o.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    o.set_defaults(func=_pool)

    d = sub.add_parser(
        "decisions",
        help="what a PCC arm's monitor intervals decided, from stored telemetry (no experiment "
        "is run)",
        description="Over every run of ARM in the databases (MIs that finished after --skip-s): "
        "per verdict, MIs per second, mean step and target rate as shares of the link's "
        "capacity and the share whose RTT gradient counted; and per band of send rate / "
        "capacity, how often the RTT gradient counted (above capacity: a queue of ours seen "
        "within one MI; below it: noise taken for one).",
    )
    d.add_argument("dbs", nargs="+", metavar="RESULTS.sqlite")
    d.add_argument("--arm", required=True, metavar="ARM", help="arm label, as stored")
    d.add_argument("--skip-s", type=float, default=10.0,
                   help="leave out MIs that finished before this many seconds (default "
                   "%(default)s: slow start and the first climb)")
    d.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    d.set_defaults(func=_decisions)

    st = sub.add_parser(
        "stalls",
        help="when in the session each arm stalled, from stored player series (no experiment "
        "is run)",
        description="Over every viewer session in the databases: stall seconds and stalls "
        "per session in each phase of the session (spans of the page's clock), per arm.",
    )
    st.add_argument("dbs", nargs="+", metavar="RESULTS.sqlite")
    st.add_argument("--arm", action="append", default=[], metavar="ARM",
                    help="arm label, as stored (repeat for several; default: every arm)")
    st.add_argument("--edges", default="0,5,10,20", metavar="S,S,...",
                    help="phase boundaries in seconds, from 0; the last phase runs to the end "
                    "(default %(default)s)")
    st.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    st.set_defaults(func=_stalls)

    r = subparsers.add_parser(
        "report",
        help="self-contained HTML report of an A/B results database",
        description="Tables with bootstrap CIs, paired differences, CDFs, throughput-vs-delay "
        "scatter with 1-sigma ellipses, and one example time series per arm.",
    )
    r.add_argument("db", metavar="RESULTS.sqlite")
    r.add_argument("--out", default="report.html", metavar="FILE")
    r.add_argument("--title", default="pccstream A/B report")
    r.add_argument("--tables", metavar="FILE.md", help="also write the tables as Markdown")
    r.add_argument("--seed", type=int, default=None, help="bootstrap seed (default fixed)")
    r.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    r.add_argument(
        "--baseline", metavar="ARM",
        help="the arm the paired differences are taken against (default: the first arm)",
    )
    r.set_defaults(func=_report)


def _export_format(text: str) -> str:
    if text not in EXPORT_FORMATS:
        raise UserError(f"--export {text!r}: expected one of {', '.join(EXPORT_FORMATS)}")
    return text


def design_from_args(args: argparse.Namespace) -> Design:
    if not args.cc:
        raise UserError("--cc is required, e.g. --cc vivace,cubic")
    if not args.scenario:
        raise UserError("--scenario is required (see `pccstream emulate scenarios`)")
    arms = parse_arms(args.cc)
    default_bitrate = {"fixed": 3000, "live": 2500}.get(args.mode)
    bitrate = args.bitrate if args.bitrate is not None else default_bitrate
    scenario, params = resolve_scenario(
        args.scenario, dict(args.param), bitrate, args.viewers
    )
    if args.ladder:
        ladder = tuple(sorted(parse_kbps_list(args.ladder, "--ladder")))
    else:
        ladder = default_ladder(args.mode, bitrate)
    if args.mode != "live" and args.latency is not None:
        raise UserError("--latency is for --mode live only")
    if args.mode in ("fixed", "live") and bitrate not in ladder:
        raise UserError(f"--bitrate {bitrate}: not in the ladder {list(ladder)}")
    return Design(
        arms=tuple(arm.label for arm in arms),
        scenario=scenario,
        scenario_params=params,
        runs=args.runs,
        duration_s=args.duration,
        mode=args.mode,
        bitrate_kbps=bitrate if args.mode in ("fixed", "live") else None,
        buffer_s=args.buffer,
        viewers=args.viewers,
        seed=args.seed,
        ladder=ladder,
        target_latency_ms=args.latency if args.mode == "live" else None,
        live_abr=bool(getattr(args, "abr", False)),
        player_params=tuple(dict(parse_param(item, "--player") for item in args.player).items()),
        datagram_size=args.datagram_size,
    )


def _manifest_fits(media: Path, ladder: tuple[int, ...], min_duration_s: float) -> bool:
    try:
        manifest = json.loads((media / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    have = {r["bitrate_bps"] // 1000 for r in manifest.get("renditions", [])}
    return set(ladder) <= have and float(manifest.get("duration_s", 0)) >= min_duration_s


def _is_chunked(media: Path) -> bool:
    try:
        return "chunk_frames" in json.loads((media / "manifest.json").read_text())
    except (OSError, ValueError):
        return False


def cache_dir() -> Path:
    return work_cache_dir() / "media"


def find_or_make_media(design: Design, explicit: str | None) -> Path:
    """The design's media: `--media` or the cache (see `media_for_ladder`)."""
    return media_for_ladder(design.ladder, design.duration_s, explicit, who="pccstream ab")


def media_for_ladder(
    ladder: tuple[int, ...], duration_s: float, explicit: str | None, *, who: str
) -> Path:
    """`explicit` (checked), else a cached or default media directory with renditions
    `ladder` (kbit/s) and at least duration + margin seconds, else encode one into the cache."""
    need_s = duration_s + MEDIA_MARGIN_S
    if explicit:
        media = Path(explicit)
        if not (media / "manifest.json").is_file():
            raise UserError(f"--media {media}: no manifest.json (make one with pccstream media)")
        if not _manifest_fits(media, ladder, duration_s):
            raise UserError(
                f"--media {media}: needs renditions {list(ladder)} kbit/s and at least "
                f"{duration_s:g} s of video"
            )
        return media
    ladder_name = "-".join(f"{k}k" for k in ladder)
    candidates = [named_media("default")]
    root = cache_dir()
    if root.is_dir():
        candidates += sorted(root.glob(f"{ladder_name}-*s"))
    for candidate in candidates:
        # Media from before VOD chunking (no `chunk_frames`) would start a whole segment late.
        if (
            _manifest_fits(candidate, ladder, need_s)
            and _is_chunked(candidate)
            and made_by_this_encoder(candidate)
        ):
            return candidate
    duration = int(math.ceil(need_s / 10.0) * 10)
    out = root / f"{ladder_name}-{duration}s"
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"{who}: encoding {duration} s of media at {ladder_name} into {out}", file=sys.stderr)
    command = [
        sys.executable,
        "-m",
        "pccstream.cli",
        "media",
        "synth",
        "--out",
        str(out),
        "--duration",
        str(duration),
        "--ladder",
        ",".join(f"{k}k" for k in ladder),
        "--force",
    ]
    result = subprocess.run(command, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise UserError(f"media encoding failed: {result.stderr.strip().splitlines()[-1:]}")
    return out


def find_live_media(design: Design, explicit: str | None) -> Path:
    """`--live-media`, else the `live` media (made on first use): a live-capable directory
    with the design's bitrate."""
    if explicit:
        media = Path(explicit)
    else:
        from pccstream.media.recipes import ensure_named_media

        media = ensure_named_media("live")
    flag = "--live-media" if explicit else "media/live"
    if not (media / "manifest.json").is_file():
        raise UserError(f"{flag} {media}: no manifest.json (./infra/bootstrap.sh makes media/live)")
    from pccstream.server.live import LiveChannel

    channel = LiveChannel.open(media)  # UserError naming what does not suit live delivery
    have = [r.meta.bitrate_bps // 1000 for r in channel.renditions]
    if design.bitrate_kbps not in have:
        raise UserError(
            f"--bitrate {design.bitrate_kbps}: {media} has live renditions {have} kbit/s"
        )
    return media


def _latest_unfinished(store: Store) -> Design:
    for row in reversed(store.experiments()):
        design = Design.from_dict(json.loads(row["design_json"]))
        if len(store.completed(design.experiment_id)) < len(schedule(design)):
            return design
    raise UserError(f"{store.path}: nothing to resume (every experiment is complete)")


def _export(args: argparse.Namespace, fmt: str | None = None) -> int:
    fmt = fmt or str(args.format)
    with open_store(args.db, read_only=True) as store:
        out = Path(args.out or Path(args.db).with_suffix(f".{fmt}"))
        runs, segments = export_runs(store, fmt, out)
    print(f"exported {runs} runs to {out} and {segments} segments to {segments_path(out)}")
    return 0


def _check_resamples(count: int) -> None:
    # Percentile CIs need a distribution to take quantiles of; fewer is a typo, not a choice.
    if count < 100:
        raise UserError(f"--resamples {count}: expected at least 100")


def _pool(args: argparse.Namespace) -> int:
    from pccstream.ab import stats
    from pccstream.ab.pool import compare, load, markdown, to_json

    _check_resamples(args.resamples)
    sources = load(args.dbs)
    results = [
        compare(sources, args.arm, other, metric=args.metric, drop_starved=args.drop_starved,
                mixed=args.mixed, resamples=args.resamples,
                seed=stats.DEFAULT_SEED if args.seed is None else args.seed)
        for other in args.against
    ]
    if args.json:
        print(json.dumps([to_json(r) for r in results], indent=2))
    else:
        print("\n".join(markdown(r) for r in results), end="")
    return 0


def _decisions(args: argparse.Namespace) -> int:
    from pccstream.ab.decisions import markdown, summarize, to_json

    result = summarize(args.dbs, args.arm, skip_s=args.skip_s)
    print(json.dumps(to_json(result), indent=2) if args.json else markdown(result), end="")
    return 0


def _stalls(args: argparse.Namespace) -> int:
    from pccstream.ab.stalls import markdown, parse_edges, summarize, to_json

    result = summarize(args.dbs, edges=parse_edges(args.edges), arms=args.arm)
    print(json.dumps(to_json(result), indent=2) if args.json else markdown(result), end="")
    return 0


def _ab(args: argparse.Namespace) -> int:
    if args.export:
        return _export(args, args.export)
    from pccstream.ab.experiment import run_experiment
    from pccstream.ab.runner import BrowserRunner

    stale = stale_web_build()
    if stale is not None:
        raise UserError(stale)
    command = shlex.join(["pccstream", *sys.argv[1:]]) if sys.argv else None
    with open_store(args.db) as store:
        if args.resume and not args.cc and not args.scenario:
            design = _latest_unfinished(store)
        else:
            design = design_from_args(args)
        if args.cluster:
            from pccstream.ab.cluster import connect, print_outcome, run_on_cluster

            with connect(args.cluster) as client:
                outcome = run_on_cluster(
                    store, design, client, resume=args.resume, command=command,
                    media=args.media, live_media=args.live_media, keep_logs=args.log_dir,
                    max_load=args.max_load, max_load_wait_s=args.max_load_wait,
                )  # fmt: skip
            return print_outcome(outcome, args.db)
        if design.mode == "live":
            media = find_live_media(design, args.live_media)
        else:
            media = find_or_make_media(design, args.media)

        async def main() -> None:
            runner = BrowserRunner(
                media,
                keep_logs=args.log_dir,
                live=design.mode == "live",
            )
            await runner.start()
            try:
                outcome = await run_experiment(
                    store,
                    design,
                    runner,
                    resume=args.resume,
                    command=command,
                    max_load=args.max_load,
                    max_load_wait_s=args.max_load_wait,
                )
            finally:
                await runner.close()
            overheads = outcome.overheads_s
            overhead = (
                f", mean per-run overhead {sum(overheads) / len(overheads):.1f} s"
                if overheads
                else ""
            )
            elsewhere = (
                f", {outcome.claimed_elsewhere} left to another process"
                if outcome.claimed_elsewhere
                else ""
            )
            print(
                f"experiment {outcome.experiment_id}: {outcome.ran} runs in "
                f"{outcome.wall_s:.0f} s ({outcome.skipped} already stored{elsewhere}){overhead}; "
                f"results in {args.db}"
            )

        try:
            with sigterm_interrupts():
                asyncio.run(main())
        except KeyboardInterrupt:
            raise Interrupted(
                f"completed runs are stored in {args.db}, continue with --resume"
            ) from None
    return 0


def _report(args: argparse.Namespace) -> int:
    from pccstream.ab.report import write_report

    _check_resamples(args.resamples)
    with open_store(args.db, read_only=True) as store:
        out = Path(args.out)
        write_report(store, out, title=args.title, seed=args.seed, resamples=args.resamples,
                     baseline=args.baseline)
        if args.tables:
            from pccstream.ab.report import markdown_tables

            Path(args.tables).write_text(
                markdown_tables(store, seed=args.seed, resamples=args.resamples,
                                baseline=args.baseline)
            )
    print(f"report written to {out}")
    return 0

"""`pccstream bench ...`: benchmarks that print JSON."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pccstream.bench.leaderboard import (
    DEFAULT_SCENARIO,
    LeaderboardSettings,
    format_table,
    plot_leaderboard,
    run_leaderboard,
)
from pccstream.bench.sustain import DEFAULT_BITRATES_KBPS
from pccstream.bench.transfer import Arm, TransferSettings, run_transfer_sync
from pccstream.cc.base import DEFAULT_MAX_DATAGRAM_SIZE
from pccstream.cli_conventions import (
    add_cc,
    add_json,
    add_log_dir,
    add_max_load,
    add_scenario,
    add_seed,
    progress_to_stderr,
)
from pccstream.errors import UserError
from pccstream.server.datagram_size import check_max_datagram_size


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    bench = subparsers.add_parser("bench", help="benchmarks (print JSON)")
    commands = bench.add_subparsers(dest="bench_command", metavar="BENCHMARK", required=True)
    transfer = commands.add_parser(
        "transfer",
        help="bulk transfer through the emulator with each congestion controller",
        description="The real server and a headless aioquic client doing bulk transfer "
        "through the link emulator, per controller; medians over runs.",
    )
    add_cc(transfer, required=True)
    add_scenario(transfer, required=True)
    transfer.add_argument(
        "--duration", type=float, default=30.0, help="seconds per run (default 30)"
    )
    transfer.add_argument(
        "--flows", type=int, default=1, help="concurrent flows per arm (default 1)"
    )
    transfer.add_argument("--runs", type=int, default=1, help="runs per arm (default 1)")
    add_seed(transfer, help="base seed (run i uses seed+i; default 1)")
    transfer.add_argument("--compete", action="store_true", help="run all arms at once on one link")
    transfer.add_argument(
        "--fairness-window", type=float, default=20.0, help="last S seconds for Jain's index"
    )
    add_log_dir(
        transfer, "keep the emulator logs here, and each flow's controller telemetry (JSON lines)"
    )
    transfer.add_argument(
        "--no-realtime-endpoints",
        dest="realtime_endpoints",
        action="store_false",
        help="run client and server at normal priority (default: SCHED_RR 5 while flows run, "
        "below the emulator's 10)",
    )
    transfer.add_argument(
        "--datagram-size",
        type=int,
        default=DEFAULT_MAX_DATAGRAM_SIZE,
        metavar="BYTES",
        help="the server's largest UDP payload (default %(default)s; 1452: Ethernet-sized)",
    )
    add_max_load(transfer)
    add_json(transfer)
    transfer.set_defaults(func=_transfer)
    _register_leaderboard(commands)
    _register_sustain(commands)
    _register_soak(commands)


def _transfer(args: argparse.Namespace) -> int:
    if args.duration <= 0 or args.duration > 3600:
        raise UserError(f"--duration {args.duration}: must be in (0, 3600] seconds")
    if not 1 <= args.flows <= 16:
        raise UserError(f"--flows {args.flows}: must be 1..16")
    if not 1 <= args.runs <= 100:
        raise UserError(f"--runs {args.runs}: must be 1..100")
    arms = _arms(args.cc)
    params = dict(args.param)
    settings = TransferSettings(
        arms=arms,
        scenario=args.scenario,
        scenario_params=params,
        duration_s=args.duration,
        flows=args.flows,
        runs=args.runs,
        seed=args.seed,
        compete=args.compete,
        fairness_window_s=min(args.fairness_window, args.duration),
        log_dir=args.log_dir,
        realtime_endpoints=args.realtime_endpoints,
        datagram_size=check_max_datagram_size(args.datagram_size, "--datagram-size"),
        max_load=args.max_load,
        max_load_wait_s=args.max_load_wait,
    )
    result = run_transfer_sync(settings, progress_to_stderr)
    print(json.dumps(result, indent=2) if args.json else format_transfer(result))
    return 0


_TRANSFER_COLUMNS = (
    ("throughput_mbps", "throughput Mbit/s", "{:.2f}"),
    ("utilization", "utilization", "{:.3f}"),
    ("p95_signal_delay_ms", "p95 signal delay ms", "{:.1f}"),
    ("rtt_p95_ms", "p95 RTT ms", "{:.1f}"),
    ("loss_rate", "loss %", "{:.2%}"),
    ("power", "power", "{:.1f}"),
    ("jain_index", "Jain", "{:.3f}"),
)


def format_transfer(result: dict[str, Any]) -> str:
    """The medians per arm as a text table (valid Markdown); `--json` has everything."""
    header = ["arm", *(title for _, title, _ in _TRANSFER_COLUMNS)]
    lines = [header]
    for label, arm in result["arms"].items():
        median = arm["median"]
        cells = [label]
        for key, _, fmt in _TRANSFER_COLUMNS:
            value = median.get(key)
            cells.append("n/a" if value is None else fmt.format(value).replace("%", ""))
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = [
        f"{result['scenario']}, {result['duration_s']:g} s x {result['runs']} run(s), "
        f"{result['flows']} flow(s) per arm{' competing' if result['compete'] else ''} "
        "(medians over runs; --json for every run)"
    ]
    for label, arm in result["arms"].items():
        starved = arm.get("starved_runs") or []
        if starved:
            counted = "the others" if arm["median_runs"] < len(arm["runs"]) else "all runs"
            out.append(f"{label}: run(s) {', '.join(str(r + 1) for r in starved)} CPU-starved "
                       f"(--json: cpu_starved_reason); medians over {counted}")
    for n, line in enumerate(lines):
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |")
        if n == 0:
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def _register_leaderboard(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    board = commands.add_parser(
        "leaderboard",
        help="every registered controller on one scenario, ranked by power",
        description="Runs each registered controller (or --cc) through `bench transfer` on "
        "the scenario and prints throughput, p95 signal delay, power and loss, best power "
        "first (medians over runs).",
    )
    add_scenario(board, default=DEFAULT_SCENARIO, help_extra="the contest setup")
    add_cc(board, help_extra="only these (default: every registered controller)")
    board.add_argument("--duration", type=float, default=30.0, help="seconds per run (default 30)")
    board.add_argument("--runs", type=int, default=1, help="runs per controller (default 1)")
    add_seed(board, help="base seed (run i uses seed+i; default 1)")
    add_log_dir(board, "keep the emulator logs here")
    board.add_argument("--plot", type=Path, help="throughput-vs-delay plot (.png or .svg)")
    add_json(board)
    board.set_defaults(func=_leaderboard)


def _leaderboard(args: argparse.Namespace) -> int:
    if args.duration <= 0 or args.duration > 3600:
        raise UserError(f"--duration {args.duration}: must be in (0, 3600] seconds")
    if not 1 <= args.runs <= 100:
        raise UserError(f"--runs {args.runs}: must be 1..100")
    if args.plot is not None and args.plot.suffix.lower() not in (".png", ".svg"):
        raise UserError(f"--plot {args.plot}: output must end in .png or .svg")
    arms = None
    if args.cc is not None:
        arms = _arms(args.cc)
    params = dict(args.param)
    settings = LeaderboardSettings(
        scenario=args.scenario,
        arms=arms,
        scenario_params=params,
        duration_s=args.duration,
        runs=args.runs,
        seed=args.seed,
        log_dir=args.log_dir,
    )

    result = asyncio.run(run_leaderboard(settings, progress_to_stderr))
    if args.plot is not None:
        plot_leaderboard(result, args.plot)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_table(result["rows"]))
    return 0


def _register_sustain(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sustain = commands.add_parser(
        "sustain",
        help="which fixed video bitrates this machine streams and plays (browser, server, "
        "emulator CPU)",
        description="Per bitrate: the fixed-bitrate video through the emulator on a link of "
        "HEADROOM x the bitrate (10 ms RTT, big queue) with a non-limiting controller, one "
        "headless Chromium viewer; prints JSON with throughput, per-process CPU, dropped "
        "frames, buffering ratio and a verdict.",
    )
    sustain.add_argument(
        "--bitrates",
        default=",".join(str(k) for k in DEFAULT_BITRATES_KBPS),
        metavar="KBPS,...",
        help="video bitrates, kbit/s, k/M suffixes accepted (default 15000,30000,50000,95000)",
    )
    sustain.add_argument("--duration", type=float, default=20.0, help="seconds per rate (20)")
    add_cc(sustain, default="cubic", many=False)
    sustain.add_argument(
        "--headroom", type=float, default=1.1, help="link rate / bitrate (default 1.1)"
    )
    sustain.add_argument("--rtt", type=float, default=10.0, metavar="MS", help="RTT (10 ms)")
    sustain.add_argument(
        "--queue-ms", type=float, default=100.0, metavar="MS",
        help="queue size as time at the link rate (default 100 ms = 10 BDP)",
    )
    sustain.add_argument(
        "--direct", action="store_true",
        help="no emulator: the player dials the server (isolates decoding cost)",
    )
    sustain.add_argument(
        "--media", metavar="DIR",
        help="media directory with every bitrate (default: as `pccstream ab`, made with "
        "`pccstream media synth` into .cache/media and reused)",
    )
    # Its JSON is all it prints on stdout anyway; the flag is taken so that a command line
    # written for `bench transfer` or `bench soak` does not fail.
    sustain.add_argument("--json", action="store_true",
                         help="print only the JSON result (always so; progress goes to stderr)")
    sustain.set_defaults(func=_sustain)


def _sustain(args: argparse.Namespace) -> int:
    from pccstream.ab.cli import media_for_ladder
    from pccstream.bench.sustain import SustainSettings, parse_bitrates, run_sustain_sync

    bitrates = parse_bitrates(args.bitrates)
    if not 0 < args.duration <= 3600:
        raise UserError(f"--duration {args.duration:g}: must be in (0, 3600] seconds")
    if not 1.0 <= args.headroom <= 10.0:
        raise UserError(f"--headroom {args.headroom:g}: must be within 1..10 (link / bitrate)")
    if not 0 < args.rtt <= 2000:
        raise UserError(f"--rtt {args.rtt:g}: must be in (0, 2000] ms")
    if not 0 < args.queue_ms <= 10_000:
        raise UserError(f"--queue-ms {args.queue_ms:g}: must be in (0, 10000] ms")
    arm = Arm.parse(args.cc)
    settings = SustainSettings(
        bitrates_kbps=bitrates,
        duration_s=args.duration,
        cc=arm.cc,
        cc_params=tuple(arm.params.items()),
        headroom=args.headroom,
        rtt_ms=args.rtt,
        queue_ms=args.queue_ms,
        direct=args.direct,
    )
    media = media_for_ladder(
        tuple(sorted(bitrates)), args.duration, args.media, who="pccstream bench sustain"
    )
    result = run_sustain_sync(settings, media, progress_to_stderr)
    print(json.dumps(result, indent=2))
    return 0


def _register_soak(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    soak = commands.add_parser(
        "soak",
        help="the reliability suite in full: fuzzing, session churn, 50 viewers, an outage",
        description="Fuzzes every decoder of outside input (10^5 cases), churns 1,000 "
        "sessions (normal, cancelled, client SIGKILLed) sampling the server's RSS, runs 50 "
        "viewers for 60 s through the emulator checking every byte, and times the recovery "
        "from a 2 s outage; prints JSON (about 12 minutes on an idle 2-core machine).",
    )
    soak.add_argument("--media", type=Path, default=None,
                      help="media directory (default: the default media, made on first use)")
    soak.add_argument("--quick", action="store_true",
                      help="a smoke run of every part in well under a minute")
    soak.add_argument("--json", action="store_true", help="print only the JSON result")
    soak.set_defaults(func=_soak)


def _soak(args: argparse.Namespace) -> int:
    from pccstream.bench.soak import SoakSettings, format_json, quick, run_soak
    from pccstream.media.recipes import ensure_named_media

    media: Path = args.media or ensure_named_media("default")
    settings = quick(media) if args.quick else SoakSettings(media)
    progress = (lambda line: None) if args.json else (
        lambda line: print(line, file=sys.stderr, flush=True))
    result = run_soak(settings, progress)
    print(format_json(result))
    return 0 if result["ok"] else 1


def _arms(text: str) -> list[Arm]:
    """`NAME[:KEY=VALUE...],NAME...` checked against the registry."""
    arms = [Arm.parse(item) for item in text.split(",") if item.strip()]
    if not arms:
        raise UserError("--cc names no controller")
    return arms


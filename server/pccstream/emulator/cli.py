"""`pccstream emulate ...` sub-commands."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import Any

from pccstream.cli_conventions import add_json, add_scenario, add_seed
from pccstream.emulator.log import LOG_FORMATS
from pccstream.errors import Interrupted, UserError


def _param(text: str) -> tuple[str, str]:
    k, eq, v = text.partition("=")
    if not eq or not k:
        raise argparse.ArgumentTypeError(f"--param {text!r}: expected KEY=VALUE")
    return k.strip(), v.strip()


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "emulate",
        help="user-space trace-driven link emulator (UDP relay with mahimahi semantics)",
        description="Relay UDP between clients (--listen) and a server (--upstream) through an "
        "emulated bottleneck. down = server -> client. Flags override the scenario's settings. "
        "Sub-commands: analyze, bench, blast, scenarios.",
    )
    p.add_argument("--listen", metavar="HOST:PORT", help="address clients send to (port 0: any)")
    p.add_argument("--upstream", metavar="HOST:PORT", help="the server's address")
    p.add_argument("--down", metavar="RATE|TRACE", help="downlink rate (12mbit) or trace file")
    p.add_argument("--up", metavar="RATE|TRACE", help="uplink rate or trace file")
    p.add_argument("--delay", type=float, metavar="MS", help="one-way delay per direction (ms)")
    p.add_argument("--loss", metavar="P",
                   help="loss: 0.01, 1%%, or ge:p=..,r=.. / ge:mean=..,burst=..")
    p.add_argument("--queue", metavar="SPEC", help="N pkts | N kB | infinite | codel[:opts]")
    add_scenario(p, help_extra="NAME:k=v,... also works")
    add_seed(p, default=None, help="seed for loss and timeline draws (default: the scenario's)")
    p.add_argument("--log", metavar="FILE",
                   help="write the per-packet event log here (with --log-format mahimahi: the "
                   "downlink's, as mm-link's --downlink-log)")
    p.add_argument("--log-format", choices=LOG_FORMATS, default="pccstream",
                   help="pccstream (both directions, one file; default) or mahimahi (mm-link's "
                   "own format, one file per direction, for mm-throughput-graph and friends)")
    p.add_argument("--uplink-log", metavar="FILE",
                   help="with --log-format mahimahi: the uplink's log (mm-link's --uplink-log)")
    p.add_argument("--status-to", metavar="HOST:PORT",
                   help="send link status (capacity, queue) as JSON datagrams every 100 ms to a "
                   "server's --link-status-port, for the dashboard")
    p.add_argument("--realtime", nargs="?", type=int, const=10, default=None, metavar="PRIO",
                   help="run under SCHED_RR (default priority 10) for accurate timing on a "
                   "loaded machine; needs root/CAP_SYS_NICE, otherwise a warning")
    p.set_defaults(func=_run_relay)

    sub = p.add_subparsers(dest="emulate_command", metavar="SUBCOMMAND")
    a = sub.add_parser(
        "analyze",
        help="metrics (and plots) from an emulator log or a mahimahi mm-link log",
        description="Capacity, throughput, p95 queueing and signal delay, loss and power with "
        "mm-throughput-graph's definitions, from a pccstream emulator log (both directions) or "
        "a mahimahi mm-link log (one direction; the format is recognised by its header).",
    )
    a.add_argument("log", metavar="LOG")
    add_json(a)
    a.add_argument("--plot", metavar="OUT.png|svg", help="draw capacity/throughput and delay")
    a.add_argument("--bin-ms", type=int, default=500, help="bin width of the plot (ms)")
    a.set_defaults(func=_run_analyze)

    b = sub.add_parser("bench", help="measure the emulator's accuracy and speed on 127.0.0.1")
    add_json(b)
    b.add_argument("--duration", type=float, default=5.0, help="seconds per measurement")
    b.set_defaults(func=_run_bench)

    s = sub.add_parser("blast", help="saturate an emulated path with UDP for a while (with --log)")
    s.add_argument("--scenario", required=True, metavar="NAME|FILE")
    s.add_argument("--param", action="append", type=_param, default=[], metavar="KEY=VALUE",
                   help="scenario parameter (repeatable)")
    s.add_argument("--duration", type=float, default=30.0)
    s.add_argument("--rate", default="auto", help="sender rate (default: 1.5 x average capacity)")
    s.add_argument("--log", required=True, metavar="FILE")
    s.add_argument("--seed", type=int)
    s.set_defaults(func=_run_blast)

    lst = sub.add_parser("scenarios", help="list scenario names")
    add_json(lst)
    lst.add_argument(
        "--tag", metavar="TAG", help="only scenarios with this tag (e.g. cellular)"
    )
    lst.add_argument(
        "--names", action="store_true", help="names only, one a line (for shell loops)"
    )
    lst.set_defaults(func=_run_list)


def _run_relay(args: argparse.Namespace) -> int:
    from pccstream.emulator.relay import Emulator, new_event_loop, request_realtime, serve

    if not args.listen or not args.upstream:
        raise UserError("emulate: --listen HOST:PORT and --upstream HOST:PORT are required")
    emu = Emulator.from_settings(
        listen=args.listen, upstream=args.upstream, down=args.down, up=args.up,
        delay_ms=args.delay, loss=args.loss, queue=args.queue, scenario=args.scenario,
        params=dict(args.param), seed=args.seed, log=args.log, log_format=args.log_format,
        uplink_log=args.uplink_log,
    )
    if args.realtime is not None:
        got = request_realtime(args.realtime)
        if not got.startswith("SCHED_RR"):
            print(f"pccstream: warning: {got}", file=sys.stderr)
    loop = new_event_loop()
    try:
        if args.status_to:
            from pccstream.emulator.relay import parse_hostport
            from pccstream.emulator.status import StatusPublisher

            publisher = StatusPublisher(emu, parse_hostport(args.status_to, "--status-to"))

            async def serve_with_status() -> int | None:
                publisher.start()
                try:
                    return await serve(emu)
                finally:
                    publisher.close()

            stopped_by = loop.run_until_complete(serve_with_status())
        else:
            stopped_by = loop.run_until_complete(serve(emu))
    finally:
        loop.close()
    if stopped_by == signal.SIGINT:
        logs = [path for path in (args.log, args.uplink_log) if path]
        raise Interrupted(f"the log {' and '.join(logs)} is complete up to the stop" if logs
                          else "the relay stopped")
    return 0


def _run_analyze(args: argparse.Namespace) -> int:
    from pccstream.emulator.analyze import analyze_file, format_text

    result = analyze_file(args.log)
    if args.plot:
        from pccstream.emulator.plot import plot_log

        plot_log(args.log, args.plot, bin_ms=args.bin_ms)
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        print(format_text(result))
    return 0


def _run_bench(args: argparse.Namespace) -> int:
    from pccstream.emulator.bench import run_bench

    result = run_bench(duration_s=args.duration, progress=None if args.json else sys.stderr)
    print(json.dumps(result, indent=2))
    return 0


def _run_blast(args: argparse.Namespace) -> int:
    from pccstream.emulator.bench import run_blast

    summary = run_blast(args.scenario, dict(args.param), args.duration, args.rate, args.log,
                        args.seed)
    print(json.dumps(summary, indent=2))
    return 0


def _run_list(args: argparse.Namespace) -> int:
    from pccstream.emulator.scenario import list_scenarios, load_scenario

    scenarios = everything = {name: load_scenario(name) for name in list_scenarios()}
    if args.tag is not None:
        scenarios = {n: sc for n, sc in everything.items() if args.tag in sc.tags}
        if not scenarios:
            known = sorted({t for sc in everything.values() for t in sc.tags})
            raise UserError(
                f"--tag {args.tag!r}: no scenario has it (tags: {', '.join(known) or 'none'})"
            )
    if args.json:
        print(json.dumps(list(scenarios)))
    elif args.names:
        print("\n".join(scenarios))
    else:
        for n, sc in scenarios.items():
            print(f"{n:28s} {sc.description}")
    return 0


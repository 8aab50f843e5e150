"""`pccstream webrtc turn` (a local coturn for the pages) and `pccstream webrtc call` (one
call through the emulator in headless Chromium, figures as JSON). See docs/webrtc.md."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pccstream.cli_conventions import (
    REMOVED_IN,
    StopSignals,
    add_json,
    add_log_dir,
    add_scenario,
    add_seed,
    parse_kbps,
    warn,
)
from pccstream.errors import RunError, UserError
from pccstream.media.recipes import named_media
from pccstream.webrtc.turn import TurnServer


def _window(text: str) -> tuple[str, float, float]:
    name, _, span = text.partition(":")
    start, _, end = span.partition("-")
    try:
        a, b = float(start), float(end)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--window {text!r}: expected NAME:FROM-TO (s)") from None
    if not name or not 0 <= a < b:
        raise argparse.ArgumentTypeError(f"--window {text!r}: expected NAME:FROM-TO, FROM < TO")
    return name, a, b


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "webrtc",
        help="the WebRTC reference arm: a local TURN relay, one call through the emulator",
        description="The WebRTC arm (docs/webrtc.md): sender page -> coturn -> emulator -> "
        "receiver page, relay-only ICE, signalling through the pccstream server.",
    )
    sub = parser.add_subparsers(dest="webrtc_command", metavar="SUBCOMMAND", required=True)

    turn = sub.add_parser("turn", help="run a local coturn until stopped (Ctrl-C)")
    turn.add_argument("--port", type=int, default=3478, help="UDP port on 127.0.0.1 (0: any)")
    turn.add_argument("--ready-file", type=Path, help="write port, url and credentials here")
    turn.add_argument("--log", type=Path, help="coturn's log file (default: a temporary one)")
    turn.set_defaults(func=_turn)

    call = sub.add_parser("call", help="one call in headless Chromium; prints the figures")
    call.add_argument("--media", type=Path, default=named_media("default"))
    call.add_argument("--live-media", type=Path, help="the sender's source (default: --media)")
    call.add_argument("--duration", type=float, default=20.0, help="seconds from the first frame")
    call.add_argument(
        "--bitrate",
        default="2500",
        metavar="KBPS",
        help="sender's maxBitrate, kbit/s (k/M suffixes accepted: 2500k, 2.5M; default 2500). "
        "Until 0.3 a bare number above 50000 is read in the old unit, bit/s, with a warning",
    )
    call.add_argument("--rendition", help="source rendition id (default: by --bitrate)")
    call.add_argument("--codec", choices=["vp8", "vp9", "h264", "av1"])
    add_scenario(call)
    call.add_argument("--down", help="downlink rate or trace (overrides the scenario)")
    call.add_argument("--up", help="uplink rate or trace")
    call.add_argument("--delay", type=float, help="one-way delay per direction, ms")
    call.add_argument("--loss", help="loss probability")
    call.add_argument("--queue", help="queue spec, e.g. 100kB")
    add_seed(call, default=None, help="emulator seed (default: the scenario's)")
    call.add_argument("--emulator-log", type=Path, help="the emulator's per-packet log")
    add_log_dir(call, "keep the emulator's per-packet log here, as emulator.log")
    call.add_argument(
        "--no-emulator", action="store_true", help="receiver talks to coturn directly"
    )
    call.add_argument(
        "--window",
        type=_window,
        action="append",
        default=[],
        metavar="NAME:FROM-TO",
        help="report latency for frames shown FROM-TO seconds after the emulator started",
    )
    add_json(call)
    call.set_defaults(func=_call)


def _turn(args: argparse.Namespace) -> int:
    async def main() -> None:
        server = TurnServer(port=args.port, log_path=args.log)
        await server.start()
        info = {
            "port": server.port,
            "url": server.url,
            "username": server.username,
            "credential": server.credential,
        }
        if args.ready_file is not None:
            args.ready_file.write_text(json.dumps(info))
        print(f"turn relay on {server.url} (user {server.username})", flush=True)
        stop = asyncio.Event()
        signals.install(asyncio.get_running_loop(), stop.set)
        try:
            await stop.wait()
        finally:
            await server.close()

    signals = StopSignals()
    asyncio.run(main())
    return signals.exit_status


def _call(args: argparse.Namespace) -> int:
    from pccstream.webrtc.call import CallSettings, webrtc_call

    if args.duration <= 0:
        raise UserError(f"--duration {args.duration:g}: must be a positive number of seconds")
    bitrate_kbps = call_bitrate_kbps(args.bitrate)
    for flag, path in (("--media", args.media), ("--live-media", args.live_media)):
        if path is not None and not (path / "manifest.json").is_file():
            raise UserError(f"{flag} {path}: no manifest.json (make media with pccstream media)")
    emulator_log: Path | None = args.emulator_log
    if args.log_dir is not None and emulator_log is None:
        try:
            args.log_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(
                f"--log-dir {args.log_dir}: cannot create it ({exc.strerror})"
            ) from None
        emulator_log = args.log_dir / "emulator.log"
    emulator: dict[str, Any] = {
        "scenario": args.scenario,
        "params": dict(args.param) or None,
        "down": args.down,
        "up": args.up,
        "delay_ms": args.delay,
        "loss": args.loss,
        "queue": args.queue,
        "seed": args.seed,
        "log": str(emulator_log) if emulator_log else None,
    }
    settings = CallSettings(
        media=args.media,
        live_media=args.live_media,
        duration_s=args.duration,
        bitrate_bps=bitrate_kbps * 1000,
        rendition=args.rendition,
        codec=args.codec,
        emulator={k: v for k, v in emulator.items() if v is not None},
        emulate=not args.no_emulator,
        windows=args.window,
    )
    result = asyncio.run(webrtc_call(settings))
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        print(summary(result))
    error = result["receiver"]["error"] or result["sender"]["error"]
    if error:
        raise RunError(f"the call failed: {error}")
    return 0


# The sender's range: 30 kbit/s to 50 Mbit/s.
_CALL_KBPS = (30, 50_000)


def call_bitrate_kbps(text: str) -> int:
    """`--bitrate` of `webrtc call` in kbit/s. It was bit/s before 0.2: a bare number that only
    makes sense in the old unit (above 50000, the new maximum) is converted with a warning; one
    that fits both units (30000-50000) is refused rather than guessed."""
    low, high = _CALL_KBPS
    bare = text.strip().isdigit()
    if bare and int(text) > high:
        bps = int(text)
        if not 30_000 <= bps <= 50_000_000:
            raise UserError(f"--bitrate {text}: bit/s (the old unit) within 30000-50000000")
        kbps = max(1, round(bps / 1000))
        warn(
            f"--bitrate {text}: bit/s is deprecated and goes away in pccstream {REMOVED_IN}; "
            f"--bitrate is kbit/s like everywhere else: --bitrate {kbps}k"
        )
        return kbps
    if bare and low * 1000 <= int(text) <= high:
        raise UserError(
            f"--bitrate {text}: ambiguous while the unit changes from bit/s to kbit/s: write "
            f"{text}k for {int(text) / 1000:g} Mbit/s, or {int(text) // 1000}k for the old "
            "meaning"
        )
    kbps = parse_kbps(text, "--bitrate")
    if not low <= kbps <= high:
        raise UserError(f"--bitrate {text}: kbit/s within {low}-{high} (30k to 50M)")
    return kbps


def summary(result: dict[str, Any]) -> str:
    r, s = result["receiver"], result["sender"]

    def ms(value: Any) -> str:
        return "-" if value is None else f"{value:.0f} ms"

    lines = [
        f"receiver: {r['frameWidth']}x{r['frameHeight']} at {r['framesPerSecond']} fps, "
        f"{(r['receiveBitrateBps'] or 0) / 1e6:.2f} Mbit/s, codec {r['codec']}",
        f"latency p50 {ms(r['latencyP50Ms'])}, p95 {ms(r['latencyP95Ms'])} "
        f"({r['framesShown']} frames read, {r['framesSkipped']} skipped)",
        f"freezes {r['freezeCount']} ({r['totalFreezesDurationS']:.2f} s), freeze ratio "
        f"{r['bufferingRatio']:.4f} over {r['playSeconds']:.1f} s; jitter buffer "
        f"{ms(r['jitterBufferDelayMs'])}; startup {ms(r['startupDelayMs'])}",
        f"sender: {s['frameWidth']}x{s['frameHeight']} at {s['framesPerSecond']} fps, target "
        f"{(s['targetBitrateBps'] or 0) / 1e6:.2f} Mbit/s, "
        f"limited by {s['qualityLimitationReason']}",
    ]
    for name, w in result["windows"].items():
        lines.append(
            f"window {name}: {w['frames']} frames, p50 {ms(w['latencyP50Ms'])}, "
            f"p95 {ms(w['latencyP95Ms'])}"
        )
    error = r["error"] or s["error"]
    if error:
        lines.append(f"error: {error}")
    return "\n".join(lines)

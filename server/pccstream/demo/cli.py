"""`pccstream demo`: start the server and one emulator per arm, print one URL.

Single view: `pccstream demo --cc vivace --scenario video-rttflap` → the player with its live
dashboard, through an emulator running the scenario. Compare view: `--cc vivace,cubic`
→ two sessions side by side, each through its own emulator instance with the same scenario
and seed, time axes aligned. Every emulator publishes its link status to the server, so the
dashboards draw the true capacity and queue.

The arm `webrtc` (`--cc webrtc`, `--cc vivace,webrtc`) is the WebRTC reference arm
(docs/webrtc.md): the demo starts coturn and an emulator in front of it (same scenario and
seed), and the arm's page is the WebRTC receiver, which embeds its sender page and draws its
getStats series. It is live, so the other arm of a comparison watches the live channel.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pccstream.cc.registry import create_controller, split_cc_spec
from pccstream.cli_conventions import (
    StopSignals,
    add_bitrate,
    add_cc,
    add_scenario,
    add_seed,
    deprecated_alias,
    parse_kbps,
)
from pccstream.contracts import page_query
from pccstream.emulator.relay import EmulatorProcess
from pccstream.errors import UserError
from pccstream.media.recipes import ensure_named_media, named_media
from pccstream.server.app import ServerConfig, default_state_dir, default_web_root, peak_rss_mib
from pccstream.stack import streaming_server
from pccstream.webrtc.turn import TurnServer, turn_url

DEFAULT_SCENARIO = "video-rttflap"
DEFAULT_SEED = 1
# The WebRTC reference arm's name in --cc (not a congestion controller: libwebrtc's GCC).
WEBRTC_ARM = "webrtc"


def _param(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"--player {text!r}: expected KEY=VALUE")
    return key.strip(), value.strip()


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "demo",
        help="serve media through emulated links and print the dashboard URL",
        description="Start the server and an emulator per arm (same scenario and seed), "
        "then print ONE URL: the player with its live dashboard, or with --cc A,B two "
        "sessions side by side. Runs until Ctrl-C.",
    )
    add_cc(
        parser,
        default="vivace",
        help_extra="two (A,B, e.g. vivace,cubic) are compared side by side; "
        f"'{WEBRTC_ARM}' is the WebRTC reference arm (compared with it, the other arm plays "
        "live)",
    )
    deprecated_alias(parser, "--compare", new="--cc A,B", dest="cc")
    add_scenario(parser, default=DEFAULT_SCENARIO, help_extra="'none' connects directly")
    add_bitrate(parser, help="the player's bitrate (fixed or live mode; same as --player "
                "bitrate=KBPS)")
    add_seed(parser, default=DEFAULT_SEED, help=f"emulator seed, all arms (default {DEFAULT_SEED})")
    parser.add_argument(
        "--media",
        type=Path,
        help=f"media directory (default: {named_media('default')}, made on first use)",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="watch the live channel (player mode=live) instead of video on demand",
    )
    parser.add_argument(
        "--live-media",
        type=Path,
        help=f"the live channel's media (default: {named_media('live')}, served when it "
        "exists, made on first use by --live and the webrtc arm)",
    )
    parser.add_argument("--http-port", type=int, default=8080, help="HTTP port (0: any)")
    parser.add_argument("--port", type=int, default=0, help="QUIC port (default: any)")
    parser.add_argument(
        "--player",
        action="append",
        type=_param,
        default=[],
        metavar="KEY=VALUE",
        help="extra player URL parameter (repeatable), e.g. buffer=4 or mode=fixed",
    )
    parser.add_argument("--qlog-dir", type=Path, help="write a qlog per QUIC connection here")
    parser.add_argument(
        "--recordings-dir",
        type=Path,
        default=default_state_dir() / "recordings",
        help="served at /recordings/ for ?replay= (default: %(default)s)",
    )
    parser.add_argument("--web-root", type=Path, default=default_web_root(), help=argparse.SUPPRESS)
    parser.add_argument(
        "--state-dir", type=Path, default=default_state_dir(), help="where the certificate is kept"
    )
    parser.add_argument("--ready-file", type=Path, help="write the URL and ports as JSON here")
    parser.add_argument(
        "--log-level", default="warning", choices=["debug", "info", "warning", "error"]
    )
    parser.set_defaults(func=_demo)


@dataclass
class Arm:
    cc: str
    emulator: EmulatorProcess | None = None
    emulator_port: int | None = None
    # The webrtc arm: coturn (the sender's TURN server; the receiver's is the emulator) and the
    # signalling room (the receiver page makes it unique per page load).
    turn: TurnServer | None = None
    turn_port: int | None = None
    room: str = "demo"

    @property
    def webrtc(self) -> bool:
        return self.cc == WEBRTC_ARM

    def player_query(self, extra: list[tuple[str, str]]) -> str:
        if self.webrtc:
            return self.webrtc_query(extra)
        query: list[tuple[str, str]] = [("cc", self.cc)]
        if self.emulator_port is not None:
            query.append(("server", f"https://127.0.0.1:{self.emulator_port}/stream"))
        return page_query("player", query + extra)

    def webrtc_query(self, extra: list[tuple[str, str]]) -> str:
        """The receiver page's query (web/README.md, "WebRTC arm"): its TURN server is the
        emulator (coturn itself without one); `sender` is the query of the sender page it
        embeds (coturn directly). The player's `bitrate` (kbit/s) caps the sender likewise."""
        assert self.turn_port is not None
        port = self.emulator_port if self.emulator_port is not None else self.turn_port
        sender = [("turn", turn_url(self.turn_port))]
        sender += [("bitrate", str(int(v) * 1000)) for k, v in extra if k == "bitrate"]
        query = [("mode", WEBRTC_ARM), ("room", self.room), ("turn", turn_url(port))]
        return page_query("webrtc_receiver",
                          [*query, ("sender", page_query("webrtc_sender", sender))])


def parse_arms(cc: str) -> list[str]:
    """`--cc A` (one view) or `--cc A,B` (compare view)."""
    names = [n.strip() for n in cc.split(",")]
    if not all(names) or len(names) > 2:
        raise UserError(f"--cc {cc!r}: expected one controller or two, e.g. vivace,cubic")
    if names.count(WEBRTC_ARM) > 1:
        raise UserError(
            f"--cc {cc!r}: one {WEBRTC_ARM} arm at most; compare it with a "
            "controller, e.g. vivace,webrtc"
        )
    for name in names:
        if name != WEBRTC_ARM:
            create_controller(*split_cc_spec(name))  # UserError naming what is wrong
    return names


def player_extra(
    names: list[str], live: bool, player: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The WebTransport arms' extra player parameters; a webrtc arm makes the other one live."""
    extra = [
        (key, str(parse_kbps(value, "--player bitrate")) if key == "bitrate" else value)
        for key, value in player
    ]
    modes = [value for key, value in extra if key == "mode"]
    if WEBRTC_ARM in names:
        if len(names) == 1 and extra and any(key != "bitrate" for key, _ in extra):
            keys = ", ".join(sorted({key for key, _ in extra if key != "bitrate"}))
            raise UserError(
                f"--player {keys}: the {WEBRTC_ARM} arm takes no player parameters "
                "(only bitrate=KBPS, which caps its sender)"
            )
        if any(mode != "live" for mode in modes):
            raise UserError(
                f"--player mode={modes[0]}: the {WEBRTC_ARM} arm is live, so the arm it is "
                "compared with must be too (drop --player mode=...)"
            )
    if (live or WEBRTC_ARM in names) and not modes:
        extra.append(("mode", "live"))
    return extra


def page_url(base: str, arms: list[Arm], extra: list[tuple[str, str]]) -> str:
    if len(arms) == 1:
        page = "webrtc-recv.html" if arms[0].webrtc else ""
        return f"{base}{page}?{arms[0].player_query(extra)}"
    query = page_query("compare",
                       [("a", arms[0].player_query(extra)), ("b", arms[1].player_query(extra))])
    return f"{base}compare.html?{query}"


async def run_demo(args: argparse.Namespace, stop: asyncio.Event) -> None:
    names = parse_arms(args.cc)
    webrtc = WEBRTC_ARM in names
    live = bool(args.live) or webrtc
    player = list(args.player)
    if args.bitrate is not None:
        player = [(k, v) for k, v in player if k != "bitrate"] + [("bitrate", str(args.bitrate))]
    extra = player_extra(names, live, player)
    media: Path = args.media or ensure_named_media("default")
    live_media: Path | None = args.live_media
    if live_media is None:
        live_media = ensure_named_media("live") if live else named_media("live")
    if not (live_media / "manifest.json").is_file():
        if live:
            why = f"the {WEBRTC_ARM} arm sends the live channel" if webrtc else "--live"
            raise UserError(
                f"--live-media {live_media}: no manifest.json ({why}; "
                "./infra/bootstrap.sh makes it)"
            )
        live_media = None
    config = ServerConfig(
        media_dir=media,
        port=args.port,
        http_port=args.http_port,
        cc=split_cc_spec(next((n for n in names if n != WEBRTC_ARM), "vivace"))[0],
        web_root=args.web_root,
        state_dir=args.state_dir,
        qlog_dir=args.qlog_dir,
        link_status_port=0,
        recordings_dir=args.recordings_dir,
        live_media=live_media,
    )
    server = streaming_server(config)
    arms = [Arm(name, room=f"demo-{'ab'[i]}") for i, name in enumerate(names)]
    try:
        await server.start()
        assert server.link_status is not None
        status_to = f"127.0.0.1:{server.link_status.port}"
        for arm in arms:
            upstream = f"127.0.0.1:{server.quic_port}"
            if arm.webrtc:
                arm.turn = TurnServer()
                arm.turn_port = await arm.turn.start()
                upstream = f"127.0.0.1:{arm.turn_port}"
            if args.scenario != "none":
                arm.emulator = EmulatorProcess(
                    upstream=upstream,
                    scenario=args.scenario,
                    params=dict(args.param),
                    seed=args.seed,
                    # The server routes link status to WebTransport sessions only.
                    status_to=None if arm.webrtc else status_to,
                )
                arm.emulator_port = await arm.emulator.start()
        url = page_url(server.page_url, arms, extra)
        info: dict[str, Any] = {
            **server.ready_info(),
            "url": url,
            "scenario": args.scenario,
            "seed": args.seed,
            "arms": [
                {"cc": a.cc, "emulator_port": a.emulator_port}
                | ({"turn_port": a.turn_port, "room": a.room} if a.webrtc else {})
                for a in arms
            ],
        }
        if args.ready_file is not None:
            args.ready_file.write_text(json.dumps(info))
        what = "compare " + " vs ".join(names) if len(arms) > 1 else names[0]
        if webrtc and len(arms) > 1 and not args.live:
            other = next(n for n in names if n != WEBRTC_ARM)
            what += f" (live: the {WEBRTC_ARM} arm implies --live for {other})"
        elif live:
            what += " (live)"
        print(f"pccstream demo: {what}, scenario {args.scenario} (seed {args.seed})", flush=True)
        print(f"pccstream demo: open {url}", flush=True)
        print(
            f"pccstream demo: recordings in {args.recordings_dir} replay at "
            f"{server.page_url}?replay=/recordings/NAME.jsonl; Ctrl-C stops",
            flush=True,
        )
        await stop.wait()
    finally:
        for arm in arms:
            if arm.emulator is not None:
                await arm.emulator.close()
            if arm.turn is not None:
                await arm.turn.close()
        server.close()
        print(f"pccstream demo: stopped; peak RSS {peak_rss_mib():.1f} MiB", flush=True)


def _demo(args: argparse.Namespace) -> int:
    for name, port in (("--port", args.port), ("--http-port", args.http_port)):
        if not 0 <= port <= 65535:
            raise UserError(f"{name} {port} is not a port number (0-65535)")
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    signals = StopSignals()
    signals.install(loop, stop.set)
    try:
        loop.run_until_complete(run_demo(args, stop))
    finally:
        loop.close()
    return signals.exit_status

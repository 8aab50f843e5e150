"""`pccstream serve`: run the streaming server."""

from __future__ import annotations

import argparse
import asyncio
import logging
from pathlib import Path

from pccstream.cc.base import DEFAULT_MAX_DATAGRAM_SIZE
from pccstream.cli_conventions import StopSignals
from pccstream.errors import UserError
from pccstream.server.app import ServerConfig, default_state_dir, default_web_root, run_forever
from pccstream.server.datagram_size import LARGEST_MAX_DATAGRAM_SIZE
from pccstream.stack import streaming_server


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "serve",
        help="serve media over WebTransport and the player over HTTP",
        description="Serve a media directory over WebTransport (HTTP/3) with a chosen "
        "congestion controller, and the web player over http://127.0.0.1:HTTP_PORT.",
    )
    parser.add_argument(
        "--media", type=Path, required=True, help="media directory (made by `pccstream media`)"
    )
    parser.add_argument(
        "--live-media",
        type=Path,
        help="media directory played in a loop, in real time, as the live channel "
        "(segments <= 0.5 s; package with --segment-seconds 0.5 --chunk-frames 1)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="QUIC address (127.0.0.1 also binds ::1)"
    )
    parser.add_argument("--port", type=int, default=4433, help="QUIC/UDP port (0: any free port)")
    parser.add_argument(
        "--http-port", type=int, default=8080, help="HTTP port of the web app (0: any)"
    )
    parser.add_argument(
        "--cc",
        default="cubic",
        help="default congestion controller (a session may ask for another)",
    )
    parser.add_argument(
        "--web-root", type=Path, default=default_web_root(), help="built web app (web/dist)"
    )
    parser.add_argument(
        "--state-dir", type=Path, default=default_state_dir(), help="where the certificate is kept"
    )
    parser.add_argument(
        "--max-datagram-size",
        type=int,
        default=DEFAULT_MAX_DATAGRAM_SIZE,
        help="largest UDP payload to send, in bytes (default %(default)s, QUIC's minimum, "
        f"which every path carries; up to {LARGEST_MAX_DATAGRAM_SIZE} on an Ethernet path: "
        "no path-MTU discovery is done, and a client's own limit is honoured)",
    )
    parser.add_argument("--qlog-dir", type=Path, help="write a qlog file per QUIC connection here")
    parser.add_argument(
        "--link-status-port",
        type=int,
        help="receive emulator link status (pccstream emulate --status-to) on this UDP port "
        "of 127.0.0.1 and stream it to the sessions behind that emulator (0: any port)",
    )
    parser.add_argument(
        "--recordings-dir",
        type=Path,
        help="serve telemetry recordings (JSON Lines) from here at /recordings/NAME, "
        "for the dashboard's ?replay=/recordings/NAME",
    )
    parser.add_argument(
        "--ready-file", type=Path, help="write ports and certificate hash as JSON here once serving"
    )
    parser.add_argument(
        "--enable-test-hooks",
        action="store_true",
        help="honour test.* session parameters (e.g. withholding data); never for real viewers",
    )
    parser.add_argument(
        "--log-level", default="warning", choices=["debug", "info", "warning", "error"]
    )
    parser.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    ports = [("--port", args.port), ("--http-port", args.http_port)]
    if args.link_status_port is not None:
        ports.append(("--link-status-port", args.link_status_port))
    for name, port in ports:
        if not 0 <= port <= 65535:
            raise UserError(f"{name} {port} is not a port number (0-65535)")
    if args.host not in ("127.0.0.1", "::1", "localhost"):
        raise UserError(f"--host {args.host}: pccstream serves on loopback only (127.0.0.1 or ::1)")
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    config = ServerConfig(
        media_dir=args.media,
        host="127.0.0.1" if args.host == "localhost" else args.host,
        port=args.port,
        http_port=args.http_port,
        cc=args.cc,
        web_root=args.web_root,
        state_dir=args.state_dir,
        enable_test_hooks=args.enable_test_hooks,
        qlog_dir=args.qlog_dir,
        link_status_port=args.link_status_port,
        recordings_dir=args.recordings_dir,
        live_media=args.live_media,
        max_datagram_size=args.max_datagram_size,  # StreamingServer.start checks it
    )
    return _run(config, args.ready_file)


def _run(config: ServerConfig, ready_file: Path | None) -> int:
    loop = asyncio.new_event_loop()
    main = loop.create_task(run_forever(streaming_server(config), ready_file))
    signals = StopSignals()
    signals.install(loop, main.cancel)
    try:
        loop.run_until_complete(main)
    except asyncio.CancelledError:
        pass
    finally:
        loop.close()
    return signals.exit_status

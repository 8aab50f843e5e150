"""What QUIC and WebTransport add to the media bytes, at each server datagram size.

`python -m pccstream.bench.wire_overhead [--sizes 1200,1452] [--segments 6]` serves opaque
1 MB segments from a `pccstream serve` child on loopback (no emulator, one request at a time)
and counts the UDP payload bytes the client receives for them: packet headers, AEAD tags,
frame and response headers, and the session's telemetry stream. Prints JSON. The emulator
charges a link by UDP payload bytes, so this is the share of an emulated link that is not
media (docs/ab.md, `--datagram-size`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from pccstream.cli_conventions import run_command
from pccstream.errors import UserError
from pccstream.harness.processes import BULK_SEGMENTS, ServerProcess, make_bulk_media
from pccstream.protocol import Kind, Request
from pccstream.server.datagram_size import check_max_datagram_size
from pccstream.wt_client import WebTransportClient

DEFAULT_SIZES = (1200, 1452)


async def measure(media: Path, size: int, segments: int) -> dict[str, Any]:
    """Overhead of `segments` bulk segments (after one to open the window) at `size`."""
    server = ServerProcess(media, cc="cubic", extra_args=["--max-datagram-size", str(size)])
    info = await server.start()
    try:
        async with WebTransportClient.open("127.0.0.1", int(info["quic_port"])) as client:
            await client.get(Request(Kind.SEGMENT, 0, 0))
            before = client.datagram_bytes_received
            media_bytes = 0
            for index in range(1, segments + 1):
                response = await client.get(Request(Kind.SEGMENT, 0, index % BULK_SEGMENTS))
                media_bytes += len(response.body)
            udp_bytes = client.datagram_bytes_received - before
            hello = next(r for r in client.telemetry if r.get("type") == "hello")
            return {
                "max_datagram_size": hello.get("max_datagram_size"),
                "largest_datagram": client.largest_datagram_received,
                "media_bytes": media_bytes,
                "udp_payload_bytes": udp_bytes,
                "overhead": udp_bytes / media_bytes - 1,
                "media_share": media_bytes / udp_bytes,
            }
    finally:
        await server.close()


async def run(sizes: tuple[int, ...], segments: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="pccstream-overhead-") as tmp:
        media = make_bulk_media(Path(tmp) / "media")
        results = [await measure(media, size, segments) for size in sizes]
    return {"benchmark": "wire_overhead", "segments": segments, "sizes": results}


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(item) for item in text.split(","))
    except ValueError:
        raise UserError(f"--sizes {text!r}: expected byte counts separated by commas") from None
    return tuple(check_max_datagram_size(size, "--sizes") for size in sizes)


def _print(args: argparse.Namespace) -> int:
    if not 1 <= args.segments <= 100:
        raise UserError(f"--segments {args.segments}: expected 1 to 100")
    result = asyncio.run(run(_sizes(args.sizes), args.segments))
    sys.stdout.write(json.dumps(result, indent=2) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pccstream.bench.wire_overhead",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                        help="server datagram sizes, bytes (default 1200,1452)")
    parser.add_argument("--segments", type=int, default=6, help="1 MB segments per size (6)")
    parser.set_defaults(func=_print)
    return run_command(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())

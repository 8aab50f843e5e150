"""The `pccstream` command: one sub-command per capability.

Each capability lives in its own package and contributes its sub-commands through a
`register(subparsers)` function listed in `_COMMAND_MODULES`; this module only wires them
together and turns `UserError` into a one-line message and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pccstream import __version__
from pccstream.errors import UserError

# Modules that expose `register(subparsers: argparse._SubParsersAction) -> None`.
_COMMAND_MODULES: tuple[str, ...] = (
    "pccstream.media.cli",
    "pccstream.stack.cli",
    "pccstream.emulator.cli",
    "pccstream.bench.cli",
    "pccstream.ab.cli",
    "pccstream.demo.cli",
    "pccstream.webrtc.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pccstream",
        description="Video over WebTransport with PCC congestion control inside QUIC.",
    )
    parser.add_argument("--version", action="version", version=f"pccstream {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            # A capability still being built must not break the others.
            if exc.name is not None and module_name.startswith(exc.name):
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = args.func(args)
    except UserError as exc:
        print(f"pccstream: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())

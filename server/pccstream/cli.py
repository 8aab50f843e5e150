"""The `pccstream` command: one sub-command per capability.

Each capability lives in its own package and contributes its sub-commands through a
`register(subparsers)` function listed in `_COMMAND_MODULES`; this module only wires them
together and maps outcomes to the exit statuses of `cli_conventions`: 0 success, 2 bad usage
or input (`UserError`, one line), 1 a run that failed (`RunError`), 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pccstream import __version__
from pccstream.cli_conventions import EXIT_USAGE, run_command

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
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (status 2) and --help/--version (0)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())

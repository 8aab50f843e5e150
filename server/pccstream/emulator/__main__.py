"""`python -m pccstream.emulator emulate ...`: the emulator's commands without the rest of the
pccstream CLI (EmulatorProcess and the benchmark spawn the relay this way)."""

from __future__ import annotations

import argparse
import sys

from pccstream.cli_conventions import EXIT_USAGE, run_command
from pccstream.emulator.cli import register


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pccstream.emulator")
    register(parser.add_subparsers(dest="command", required=True))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())

"""`python -m pccstream.emulator emulate ...`: the emulator's commands without the rest of the
pccstream CLI (EmulatorProcess and the benchmark spawn the relay this way)."""

from __future__ import annotations

import argparse
import sys

from pccstream.emulator.cli import register
from pccstream.errors import UserError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pccstream.emulator")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"pccstream: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""The conventions every `pccstream` command follows (README, "CLI conventions").

- Exit status: 0 success, 2 bad usage or input, 1 a run that failed, 130 interrupted (SIGINT)
  with what was finished kept.
- One flag name per thing, added here so the commands cannot drift: `--cc` (controllers),
  `--scenario` and `--param KEY=VALUE` (scenario and its parameters), `--seed`, `--log-dir`,
  `--json` (JSON and nothing else on stdout; progress goes to stderr).
- Bitrates in kbit/s everywhere, with `k` (kbit/s) and `M` (Mbit/s) suffixes accepted:
  `750`, `2500k`, `15M`.
- An old spelling keeps working for one release and warns on stderr (`deprecated_alias`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import re
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pccstream.errors import Interrupted, RunError, UserError

__all__ = ["Interrupted", "RunError", "UserError"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# The release in which the deprecated spellings go away.
REMOVED_IN = "0.3"


def warn(message: str) -> None:
    print(f"pccstream: warning: {message}", file=sys.stderr, flush=True)


# -- bitrates ---------------------------------------------------------------------------------

_BITRATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")


def parse_kbps(text: str, flag: str = "--bitrate") -> int:
    """`750` / `750k` -> 750, `2.5M` / `2500k` -> 2500 (kbit/s, whole)."""
    match = _BITRATE.match(str(text))
    if match is None:
        raise UserError(
            f"{flag} {text!r}: expected kbit/s as a number with optional k or M, "
            "e.g. 750, 2500k or 15M"
        )
    value = float(match.group(1)) * (1000.0 if match.group(2).lower() == "m" else 1.0)
    if value <= 0 or not math.isfinite(value) or value != int(value):
        raise UserError(f"{flag} {text!r}: must be a positive whole number of kbit/s")
    return int(value)


def parse_kbps_list(text: str, flag: str) -> tuple[int, ...]:
    """`300k,1.5M,3000` -> (300, 1500, 3000); order kept, duplicates refused."""
    items = [item.strip() for item in str(text).split(",")]
    if not items or not all(items):
        raise UserError(f"{flag} {text!r}: expected a comma-separated list, e.g. 1000,3000k,15M")
    out: list[int] = []
    for i, item in enumerate(items, start=1):
        try:
            kbps = parse_kbps(item, flag)
        except UserError:
            raise UserError(
                f"{flag} {text!r}: item {i} {item!r} is not a bitrate "
                "(kbit/s with optional k or M, e.g. 750, 2500k, 15M)"
            ) from None
        if kbps in out:
            raise UserError(f"{flag} {text!r}: item {i} {item!r} is listed twice")
        out.append(kbps)
    return tuple(out)


def kbps_type(flag: str) -> Callable[[str], int]:
    """An argparse `type` for one bitrate (bad input: one line, exit 2)."""

    def convert(text: str) -> int:
        try:
            return parse_kbps(text, flag)
        except UserError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


# -- key=value parameters -----------------------------------------------------------------


def parse_param(text: str, flag: str = "--param") -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise UserError(f"{flag} {text!r}: expected KEY=VALUE")
    return key.strip(), value.strip()


def _param_type(text: str) -> tuple[str, str]:
    try:
        return parse_param(text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# -- deprecated spellings -------------------------------------------------------------------


class _DeprecatedAlias(argparse.Action):
    """Stores into the new flag's destination and warns once on stderr."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        self.new_flag: str = kwargs.pop("new_flag")
        self.convert: Callable[[str], Any] | None = kwargs.pop("convert", None)
        self.append: bool = kwargs.pop("append", False)
        self.note: str = kwargs.pop("note", "")
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        old = option_string or self.option_strings[0]
        warn(
            f"{old} is deprecated and goes away in pccstream {REMOVED_IN}: use {self.new_flag}"
            + (f" ({self.note})" if self.note else "")
        )
        value = values
        if self.convert is not None:
            try:
                value = self.convert(values)
            except UserError as exc:
                parser.error(str(exc))
        if self.append:
            current = list(getattr(namespace, self.dest, None) or [])
            current.append(value)
            value = current
        setattr(namespace, self.dest, value)


def deprecated_alias(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    old: str,
    *,
    new: str,
    dest: str,
    convert: Callable[[str], Any] | None = None,
    append: bool = False,
    flag_only: bool = False,
    note: str = "",
) -> None:
    """`old` keeps working for one release: it fills `new`'s destination and warns."""
    kwargs: dict[str, Any] = {
        "dest": dest,
        "help": argparse.SUPPRESS,
        "new_flag": new,
        "convert": convert,
        "append": append,
        "note": note,
    }
    if flag_only:
        kwargs["nargs"] = 0
    parser.add_argument(old, action=_DeprecatedAlias, **kwargs)


# -- the shared flags -----------------------------------------------------------------------


def add_cc(
    parser: argparse.ArgumentParser,
    *,
    default: str | None = None,
    required: bool = False,
    many: bool = True,
    help_extra: str = "",
) -> None:
    """`--cc NAME[:KEY=VALUE...][,NAME...]`: the congestion controller(s)."""
    what = (
        "controllers (arms): NAME[:KEY=VALUE...],NAME..., e.g. vivace,cubic"
        if many
        else "congestion controller, NAME[:KEY=VALUE...]"
    )
    if default is not None:
        what += f" (default {default})"
    parser.add_argument(
        "--cc",
        default=default,
        required=required,
        metavar="CC[,CC...]" if many else "CC",
        help=what + (f"; {help_extra}" if help_extra else ""),
    )


def add_scenario(
    parser: argparse.ArgumentParser, *, default: str | None = None, required: bool = False,
    help_extra: str = "",
) -> None:
    """`--scenario NAME|FILE` and `--param KEY=VALUE` (repeatable, into `args.param`)."""
    what = "emulator scenario name or file (`pccstream emulate scenarios` lists them)"
    if default is not None:
        what += f", default {default}"
    parser.add_argument(
        "--scenario",
        default=default,
        required=required,
        metavar="NAME|FILE",
        help=what + (f"; {help_extra}" if help_extra else ""),
    )
    parser.add_argument(
        "--param",
        action="append",
        type=_param_type,
        default=[],
        metavar="KEY=VALUE",
        help="scenario parameter (repeatable), e.g. bitrate_kbps=3000",
    )


def add_seed(parser: argparse.ArgumentParser, *, default: int | None = 1, help: str = "") -> None:
    parser.add_argument(
        "--seed", type=int, default=default, help=help or f"seed (default {default})"
    )


def add_log_dir(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--log-dir", type=Path, metavar="DIR", help=help)


def add_bitrate(
    parser: argparse.ArgumentParser, *, default: int | None = None, help: str = ""
) -> None:
    """`--bitrate KBPS` (kbit/s; `2500k`, `15M` accepted), into `args.bitrate` as int kbit/s."""
    parser.add_argument(
        "--bitrate",
        type=kbps_type("--bitrate"),
        default=default,
        metavar="KBPS",
        help=(help or "video bitrate") + ", kbit/s (k/M suffixes accepted: 2500k, 15M)",
    )


def _positive_type(flag: str, what: str) -> Callable[[str], float]:
    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not value > 0 or math.isinf(value):
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: must be {what} > 0")
        return value

    return convert


def add_max_load(parser: argparse.ArgumentParser) -> None:
    """`--max-load L` and `--max-load-wait S`: runs on a shared machine are CPU-sensitive."""
    parser.add_argument(
        "--max-load",
        type=_positive_type("--max-load", "a load average"),
        metavar="L",
        help="before each run, wait (up to --max-load-wait) until the 1-minute load average "
        "is at most L; the wait and the load at each run's start are recorded",
    )
    parser.add_argument(
        "--max-load-wait",
        type=_positive_type("--max-load-wait", "a number of seconds"),
        default=600.0,
        metavar="S",
        help="longest wait for --max-load per run, seconds (default 600)",
    )


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print JSON and nothing else on stdout (progress goes to stderr)",
    )


def progress_to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class StopSignals:
    """SIGINT and SIGTERM stop a long-running command (server, relay, demo) gracefully; the
    exit status then says which: 130 after SIGINT (Ctrl-C), 0 after SIGTERM (a supervisor's
    ordinary stop)."""

    def __init__(self) -> None:
        self.received: int | None = None

    def install(self, loop: asyncio.AbstractEventLoop, on_stop: Callable[[], object]) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._stop, sig, on_stop)

    def _stop(self, sig: int, on_stop: Callable[[], object]) -> None:
        if self.received is None:
            self.received = sig
        on_stop()

    @property
    def exit_status(self) -> int:
        return EXIT_INTERRUPTED if self.received == signal.SIGINT else EXIT_OK


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt inside the block, so a batch command stopped by a
    supervisor (or `kill`) unwinds as after Ctrl-C: children closed, stored results kept."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed command (`args.func`) and map its outcome to the exit statuses above."""
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"pccstream: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RunError as exc:
        print(f"pccstream: failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except Interrupted as exc:
        print(f"pccstream: interrupted: {exc}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("pccstream: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED

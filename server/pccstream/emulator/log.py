"""Per-packet event log: compact text, one event per line, close to mahimahi's mm-link log.

    # pccstream-emulator-log 1
    # base_monotonic_ns: 123456789        (model time 0 on the monotonic clock)
    # start_unix: 1700000000.123
    # config: {...JSON...}
    <t_ms> <dir> <event> <bytes> [fields]

`dir` is `d` (down, server -> client) or `u` (up). Times are ms since the base, 3 decimals at
most. Events:

    +  arrival at the bottleneck queue            t d + bytes
    #  delivery opportunities of millisecond t    t d # bytes          (n x 1504)
    -  departure from the bottleneck              t d - bytes qdelay owd
       (qdelay = t - arrival; owd = delivery after the delay line - arrival)
    x  drop                                       t d x bytes reason   (queue|codel|loss)
    !  setting change                             t d ! key=value ...

Bytes are wire bytes (UDP payload + 28 for IPv4, + 48 for IPv6), what the schedule counts.
"""

from __future__ import annotations

import json
import time
from typing import IO, Any, Protocol

MAGIC = "# pccstream-emulator-log 1"


def _fmt(t: float) -> str:
    # Integers (trace times) print without decimals; others with at most 3.
    if t == int(t):
        return str(int(t))
    return f"{t:.3f}".rstrip("0").rstrip(".")


class PacketLog(Protocol):
    """What a link writes to: this module's `EventLog` or mahimahi's format
    (`pccstream.emulator.mahimahi.MahimahiLog`)."""

    def arrival(self, d: str, t: float, size: int) -> None: ...
    def capacity(self, d: str, t: float, nbytes: int) -> None: ...
    def departure(self, d: str, t: float, size: int, qdelay: float, owd: float) -> None: ...
    def drop(
        self, d: str, t: float, size: int, reason: str, arrival: float | None = None
    ) -> None: ...
    def setting(self, d: str, t: float, text: str) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


LOG_FORMATS = ("pccstream", "mahimahi")


class EventLog:
    """Writes the log; every method takes model times in ms. Writes go through a large buffer
    so logging a packet costs one string format and one buffered write."""

    def __init__(self, stream: IO[str], base_monotonic_ns: int, config: dict[str, Any]) -> None:
        self._out = stream
        self._w = stream.write
        self._w(f"{MAGIC}\n# base_monotonic_ns: {base_monotonic_ns}\n")
        self._w(f"# start_unix: {time.time():.6f}\n")
        self._w(f"# config: {json.dumps(config, sort_keys=True)}\n")

    @classmethod
    def open(cls, path: str, base_monotonic_ns: int, config: dict[str, Any]) -> EventLog:
        try:
            stream = open(path, "w", encoding="ascii", buffering=1 << 20)  # noqa: SIM115
        except OSError as exc:
            from pccstream.errors import UserError

            raise UserError(f"{path}: cannot open log for writing: {exc}") from None
        return cls(stream, base_monotonic_ns, config)

    def arrival(self, d: str, t: float, size: int) -> None:
        self._w(f"{_fmt(t)} {d} + {size}\n")

    def capacity(self, d: str, t: float, nbytes: int) -> None:
        self._w(f"{_fmt(t)} {d} # {nbytes}\n")

    def departure(self, d: str, t: float, size: int, qdelay: float, owd: float) -> None:
        self._w(f"{_fmt(t)} {d} - {size} {_fmt(qdelay)} {_fmt(owd)}\n")

    def drop(self, d: str, t: float, size: int, reason: str, arrival: float | None = None) -> None:
        self._w(f"{_fmt(t)} {d} x {size} {reason}\n")

    def setting(self, d: str, t: float, text: str) -> None:
        self._w(f"{_fmt(t)} {d} ! {text}\n")

    def note(self, key: str, value: dict[str, Any]) -> None:
        """A header line written later, as `# key: {...JSON...}` (the reader takes headers
        anywhere in the log)."""
        self._w(f"# {key}: {json.dumps(value, sort_keys=True)}\n")

    def flush(self) -> None:
        self._out.flush()

    def close(self) -> None:
        self._out.close()

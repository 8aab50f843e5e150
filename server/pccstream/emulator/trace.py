"""Delivery-opportunity traces with mahimahi's semantics.

A trace is a list of millisecond timestamps; each is one opportunity to deliver up to
`PACKET_SIZE` bytes. Repeated timestamps are several opportunities in that millisecond and the
schedule loops with period = last timestamp (so a leading 0 and the last line of the previous
loop fall on the same millisecond, exactly as in mahimahi's LinkQueue).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from fractions import Fraction
from pathlib import Path

from pccstream.errors import UserError

PACKET_SIZE = 1504  # bytes per delivery opportunity (mahimahi's PACKET_SIZE)

# Longest period accepted for a generated constant-rate trace; the rate error this causes is
# below 1e-9 relative, far under anything measurable.
_MAX_CONST_PERIOD_MS = 60_000


class Trace:
    """A looping schedule, stored per millisecond: `times[i]` has `counts[i]` opportunities."""

    __slots__ = ("name", "times", "counts", "_prefix")

    def __init__(self, name: str, times: tuple[int, ...], counts: tuple[int, ...]) -> None:
        self.name = name
        self.times = times
        self.counts = counts
        acc = 0
        prefix: list[int] = []
        for c in counts:
            acc += c
            prefix.append(acc)
        self._prefix = prefix

    @property
    def period_ms(self) -> int:
        return self.times[-1]

    @property
    def opportunities(self) -> int:
        return self._prefix[-1]

    def average_bps(self) -> float:
        return self.opportunities * PACKET_SIZE * 8 * 1000.0 / self.period_ms

    def count_upto(self, t: float) -> int:
        """Opportunities at times <= t (relative, may be negative: earlier loops) of the
        looping schedule, counted from the start of loop 0."""
        loops, rem = divmod(t, self.period_ms)
        idx = bisect_right(self.times, rem)
        return int(loops) * self._prefix[-1] + (self._prefix[idx - 1] if idx else 0)


def parse_trace(text: str, source: str) -> Trace:
    """Parse mahimahi trace text; errors name `source` and the line."""
    times: list[int] = []
    counts: list[int] = []
    last = -1
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            # mahimahi refuses empty lines; a single trailing newline is not a line here.
            raise UserError(f"{source}:{lineno}: empty line in trace")
        if not line.isdigit():
            raise UserError(
                f"{source}:{lineno}: {line!r} is not a non-negative integer millisecond timestamp"
            )
        ms = int(line)
        if ms < last:
            raise UserError(
                f"{source}:{lineno}: timestamp {ms} is smaller than the previous one ({last}); "
                "timestamps must be non-decreasing"
            )
        if ms == last:
            counts[-1] += 1
        else:
            times.append(ms)
            counts.append(1)
        last = ms
    if not times:
        raise UserError(f"{source}: trace is empty (no timestamps)")
    if times[-1] == 0:
        raise UserError(f"{source}: trace must last a nonzero time (last timestamp is 0)")
    return Trace(name=source, times=tuple(times), counts=tuple(counts))


def load_trace(path: str | Path) -> Trace:
    p = Path(path)
    try:
        text = p.read_text(encoding="ascii")
    except FileNotFoundError:
        raise UserError(f"{p}: trace file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{p}: cannot read trace: {exc}") from None
    return parse_trace(text, str(p))


def constant_rate_trace(rate_bps: float) -> Trace:
    """A trace delivering `rate_bps` the way mahimahi traces do: evenly spaced opportunities.

    Opportunity k (1..n) of a loop of period p falls at ceil(k * p / n) ms, so the last one is at
    p and the schedule loops exactly; n / p approximates rate / (1504 * 8 bits per ms).
    """
    if not math.isfinite(rate_bps) or rate_bps <= 0:
        raise UserError(f"rate {rate_bps} bit/s is impossible: it must be positive")
    per_ms = Fraction(rate_bps).limit_denominator(10**9) / (PACKET_SIZE * 8 * 1000)
    ratio = per_ms.limit_denominator(_MAX_CONST_PERIOD_MS)
    if ratio == 0:
        raise UserError(f"rate {rate_bps} bit/s is too low (below one packet per minute)")
    n, p = ratio.numerator, ratio.denominator
    times: list[int] = []
    counts: list[int] = []
    for k in range(1, n + 1):
        t = -((-k * p) // n)  # ceil without floats
        if times and times[-1] == t:
            counts[-1] += 1
        else:
            times.append(t)
            counts.append(1)
    return Trace(name=f"const-{rate_bps:g}bps", times=tuple(times), counts=tuple(counts))


_RATE_RE = re.compile(
    r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kmg]?)(?:bit|bits|bps|b)?(?:/s)?\s*$",
    re.IGNORECASE,
)


def parse_rate(text: str, where: str = "rate") -> float:
    """'12mbit', '12Mbps', '500kbit', '1.5Mbit/s', '20m' -> bits per second (SI prefixes)."""
    m = _RATE_RE.match(text)
    if not m:
        raise UserError(
            f"{where}: cannot parse rate {text!r} (expected e.g. 12mbit, 500kbit, 1.5Mbps)"
        )
    value = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
    if value <= 0:
        raise UserError(f"{where}: rate {text!r} is impossible: it must be positive")
    return value

"""Metrics from an emulator log, per direction, with mm-throughput-graph's definitions.
A mahimahi mm-link log is read too (`pccstream.emulator.mahimahi`), with exactly its numbers.

- capacity / throughput: bytes of delivery opportunities / of delivered packets, over the span
  from the direction's first to its last logged event.
- p95 queueing delay: 95th percentile (mahimahi's index: sorted[floor(0.95 n)]) of departure -
  arrival at the bottleneck.
- p95 signal delay (the contest's definition): for each millisecond t between the first and the
  last arrival of a delivered packet, the least time for data sent at or after t to leave the
  bottleneck; then its 95th percentile. Like mm-throughput-graph it is measured over the link,
  so the fixed propagation delay is excluded (`p95_one_way_delay_ms` includes it).
- loss_rate: dropped / arrived packets (queue, CoDel and random loss together).
- power = throughput (Mbit/s) * 1000 / p95 signal delay (ms).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pccstream.emulator.log import MAGIC
from pccstream.emulator.mahimahi import analyze_mahimahi, is_mahimahi_log, parse_mahimahi
from pccstream.emulator.trace import Trace
from pccstream.errors import UserError
from pccstream.stats import percentile95_mahimahi, signal_delays

DIR_NAMES = {"d": "down", "u": "up"}


@dataclass
class DirectionLog:
    arrivals_t: list[float] = field(default_factory=list)
    arrivals_b: list[int] = field(default_factory=list)
    cap_t: list[float] = field(default_factory=list)
    cap_b: list[int] = field(default_factory=list)
    dep_t: list[float] = field(default_factory=list)
    dep_b: list[int] = field(default_factory=list)
    dep_q: list[float] = field(default_factory=list)
    dep_owd: list[float] = field(default_factory=list)
    drops: dict[str, int] = field(default_factory=dict)
    drop_t: list[float] = field(default_factory=list)
    first: float = math.inf
    last: float = -math.inf


@dataclass
class ParsedLog:
    header: dict[str, str]
    dirs: dict[str, DirectionLog]


def parse_log(path: str | Path) -> ParsedLog:
    p = Path(path)
    try:
        fh = p.open(encoding="ascii", errors="replace")
    except OSError as exc:
        raise UserError(f"{p}: cannot read log: {exc}") from None
    header: dict[str, str] = {}
    dirs: dict[str, DirectionLog] = {}
    with fh:
        first = fh.readline().rstrip("\n")
        if first != MAGIC:
            raise UserError(
                f"{p}:1: neither a pccstream emulator log (expected {MAGIC!r}) nor a mahimahi "
                "mm-link log (expected '# mahimahi mm-link ...')"
            )
        for no, line in enumerate(fh, start=2):
            if line.startswith("#"):
                k, _, v = line[1:].partition(":")
                header[k.strip()] = v.strip()
                continue
            f = line.split()
            if not f:
                continue
            try:
                t = float(f[0])
                d = f[1]
                ev = f[2]
                size = int(f[3]) if ev != "!" else 0
                dl = dirs.get(d)
                if dl is None:
                    dl = dirs[d] = DirectionLog()
                if ev == "+":
                    dl.arrivals_t.append(t)
                    dl.arrivals_b.append(size)
                elif ev == "#":
                    dl.cap_t.append(t)
                    dl.cap_b.append(size)
                elif ev == "-":
                    dl.dep_t.append(t)
                    dl.dep_b.append(size)
                    dl.dep_q.append(float(f[4]))
                    dl.dep_owd.append(float(f[5]))
                elif ev == "x":
                    dl.drops[f[4]] = dl.drops.get(f[4], 0) + 1
                    dl.drop_t.append(t)
                elif ev == "!":
                    continue
                else:
                    raise ValueError(f"unknown event {ev!r}")
            except (ValueError, IndexError) as exc:
                raise UserError(f"{p}:{no}: malformed log line {line.strip()!r}: {exc}") from None
            if t < dl.first:
                dl.first = t
            if t > dl.last:
                dl.last = t
    return ParsedLog(header, dirs)


def analyze(parsed: ParsedLog) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for d in ("d", "u"):
        dl = parsed.dirs.get(d)
        if dl is None:
            continue
        out[DIR_NAMES[d]] = _direction_metrics(dl)
    return out


def _direction_metrics(dl: DirectionLog) -> dict[str, Any]:
    duration_ms = dl.last - dl.first if dl.last > dl.first else 0.0
    cap_bits = 8.0 * sum(dl.cap_b)
    dep_bits = 8.0 * sum(dl.dep_b)
    in_bits = 8.0 * sum(dl.arrivals_b)

    def mbps(bits: float) -> float | None:
        return bits / duration_ms / 1000.0 if duration_ms > 0 else None

    capacity = mbps(cap_bits) if dl.cap_b else None
    throughput = mbps(dep_bits)
    q = np.asarray(dl.dep_q)
    owd = np.asarray(dl.dep_owd)
    dep_t = np.asarray(dl.dep_t)
    p95q = percentile95_mahimahi(q) if len(q) else None
    p95owd = percentile95_mahimahi(owd) if len(owd) else None
    p95s = None
    if len(q):
        sd = signal_delays(dep_t - q, dep_t)
        p95s = percentile95_mahimahi(sd)
    arrivals = len(dl.arrivals_t)
    drops = sum(dl.drops.values())
    util = throughput / capacity if capacity and throughput is not None else None
    power = throughput * 1000.0 / p95s if throughput is not None and p95s else None
    return {
        "capacity_mbps": capacity,
        "throughput_mbps": throughput,
        "utilization": util,
        "p95_queue_delay_ms": p95q,
        "p95_signal_delay_ms": p95s,
        "loss_rate": drops / arrivals if arrivals else None,
        "power": power,
        # extras
        "ingress_mbps": mbps(in_bits),
        "p95_one_way_delay_ms": p95owd,
        "duration_s": duration_ms / 1000.0,
        "arrivals": arrivals,
        "departures": len(dl.dep_t),
        "drops": dict(sorted(dl.drops.items())),
    }


def signal_delay_floor_ms(trace: Trace) -> float:
    """The p95 signal delay of a sender that never queues: each millisecond's wait for the
    trace's next delivery opportunity. No sender scores below it, because the metric counts
    the trace's outages whether or not a packet waited through them."""
    times = np.asarray(trace.times, dtype=np.float64)
    return percentile95_mahimahi(signal_delays(times, times))


def analyze_file(path: str | Path) -> dict[str, Any]:
    """A pccstream emulator log, or a mahimahi mm-link log (one direction per file)."""
    try:
        with Path(path).open(encoding="ascii", errors="replace") as fh:
            first = fh.readline()
    except OSError as exc:
        raise UserError(f"{path}: cannot read log: {exc}") from None
    if is_mahimahi_log(first):
        return analyze_mahimahi(parse_mahimahi(path))
    parsed = parse_log(path)
    if not parsed.dirs:
        raise UserError(f"{path}: the log has no events")
    return analyze(parsed)


def format_text(result: dict[str, Any]) -> str:
    def f(v: float | None, fmt: str) -> str:
        return "n/a" if v is None else format(v, fmt)

    lines = []
    for name, m in result.items():
        util = m["utilization"]
        lines += [
            f"[{name}]",
            f"  Average capacity: {f(m['capacity_mbps'], '.2f')} Mbits/s",
            f"  Average throughput: {f(m['throughput_mbps'], '.2f')} Mbits/s "
            f"({f(None if util is None else 100 * util, '.1f')}% utilization)",
            f"  95th percentile per-packet queueing delay: {f(m['p95_queue_delay_ms'], '.0f')} ms",
            f"  95th percentile signal delay: {f(m['p95_signal_delay_ms'], '.0f')} ms",
            f"  Loss rate: {f(None if m['loss_rate'] is None else 100 * m['loss_rate'], '.3f')}%"
            f" (drops: {json.dumps(m['drops'])})",
            f"  Power: {f(m['power'], '.2f')}",
        ]
    return "\n".join(lines)

"""mahimahi's own mm-link log format: writing it (`emulate --log-format mahimahi`) and reading
it (`emulate analyze`) with mm-throughput-graph's definitions.

The format, as mm-link writes it (src/frontend/link_queue.cc), one file per direction:

    # mahimahi mm-link (downlink) [TRACE] > LOGFILE
    # command line: ...
    # queue: droptail [bytes=150000]
    # init timestamp: <unix ms>
    # base timestamp: <ms>
    <t> + <bytes>              arrival at the link queue
    <t> # 1504                 one delivery opportunity (a line per opportunity)
    <t> - <bytes> <delay>      departure; delay = t - arrival, ms
    <t> d <packets> <bytes>    packets dropped at enqueue (mm-link since 2018)

Times are whole ms. mm-throughput-graph (scripts/mm-throughput-graph) subtracts the base
timestamp, takes the duration from the first to the last event, averages capacity, ingress
and throughput over it, takes the 95th percentile of the departures' delays as
sorted[floor(0.95 n)], and the signal delay per arrival millisecond: the least delay of the
packets that arrived in it, a millisecond without one taking the next millisecond's + 1.

pccstream's model differs from mm-link in two places that show in the log: random loss happens
after the bottleneck (so a lost packet is logged as a departure: the link did carry it, as in
`mm-loss ... mm-link`), and CoDel's drops at dequeue are logged as `d` lines (mm-link only logs
drops at enqueue). mm-throughput-graph stops at `d` lines (mahimahi issue #136);
`grep -v '^[0-9]* d ' LOG | mm-throughput-graph 500` works around it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from pccstream.emulator.trace import PACKET_SIZE
from pccstream.errors import UserError
from pccstream.stats import percentile95_mahimahi

HEADER_PREFIX = "# mahimahi mm-link"


def _ms(t: float) -> int:
    """A model time in ms as mm-link's whole-ms timestamp (truncated, as its clock is)."""
    return math.floor(round(t, 6))


class MahimahiLog:
    """Writes what mm-link would: the downlink to one file, the uplink to another (or not at
    all). Same methods as `EventLog`, so the links write through either."""

    def __init__(self, streams: dict[str, IO[str]]) -> None:
        self._out = streams

    @classmethod
    def open(
        cls,
        paths: dict[str, str],
        *,
        traces: dict[str, str],
        queues: dict[str, str],
        command_line: str,
    ) -> MahimahiLog:
        """`paths`: direction letter ('d', 'u') -> file; headers as mm-link writes them."""
        streams: dict[str, IO[str]] = {}
        init_ms = int(time.time() * 1000)
        for d, path in paths.items():
            name = "downlink" if d == "d" else "uplink"
            try:
                stream = open(path, "w", encoding="ascii", buffering=1 << 20)  # noqa: SIM115
            except OSError as exc:
                for opened in streams.values():
                    opened.close()
                raise UserError(f"{path}: cannot open log for writing: {exc}") from None
            stream.write(
                f"{HEADER_PREFIX} ({name}) [{traces.get(d, 'unshaped')}] > {path}\n"
                f"# command line: {command_line}\n"
                f"# queue: {queues.get(d, 'infinite')}\n"
                f"# init timestamp: {init_ms}\n"
                "# base timestamp: 0\n"
            )
            streams[d] = stream
        return cls(streams)

    def arrival(self, d: str, t: float, size: int) -> None:
        out = self._out.get(d)
        if out is not None:
            out.write(f"{_ms(t)} + {size}\n")

    def capacity(self, d: str, t: float, nbytes: int) -> None:
        out = self._out.get(d)
        if out is not None:
            out.write(f"{_ms(t)} # {PACKET_SIZE}\n" * (nbytes // PACKET_SIZE))

    def departure(self, d: str, t: float, size: int, qdelay: float, owd: float) -> None:
        out = self._out.get(d)
        if out is not None:
            at = _ms(t)
            out.write(f"{at} - {size} {at - _ms(t - qdelay)}\n")

    def drop(self, d: str, t: float, size: int, reason: str, arrival: float | None = None) -> None:
        out = self._out.get(d)
        if out is None:
            return
        if reason == "loss" and arrival is not None:
            # Lost after the bottleneck: mm-link carried it (mm-loss sits outside mm-link).
            self.departure(d, t, size, t - arrival, t - arrival)
        else:
            out.write(f"{_ms(t)} d 1 {size}\n")

    def setting(self, d: str, t: float, text: str) -> None:
        out = self._out.get(d)
        if out is not None:
            out.write(f"# pccstream setting at {_ms(t)} ms: {text}\n")

    def flush(self) -> None:
        for out in self._out.values():
            out.flush()

    def close(self) -> None:
        for out in self._out.values():
            out.close()


# -- reading -------------------------------------------------------------------------------


@dataclass
class MahimahiLogData:
    link: str = "link"
    base_timestamp: int | None = None
    arrivals: int = 0
    arrival_bits: int = 0
    capacity_bits: int = 0
    departure_bits: int = 0
    departures: int = 0
    dropped_packets: int = 0
    delays: list[int] = field(default_factory=list)
    # arrival ms -> least delay of the packets that arrived in it
    signal: dict[int, int] = field(default_factory=dict)
    first: int | None = None
    last: int | None = None


def is_mahimahi_log(first_line: str) -> bool:
    return first_line.startswith(HEADER_PREFIX) or first_line.startswith("# base timestamp:")


def parse_mahimahi(path: str | Path) -> MahimahiLogData:
    p = Path(path)
    try:
        fh = p.open(encoding="ascii", errors="replace")
    except OSError as exc:
        raise UserError(f"{p}: cannot read log: {exc}") from None
    data = MahimahiLogData()
    with fh:
        for no, line in enumerate(fh, start=1):
            if line.startswith("#"):
                if line.startswith(HEADER_PREFIX):
                    name = line[len(HEADER_PREFIX) :].strip()
                    if name.startswith("(") and ")" in name:
                        data.link = name[1 : name.index(")")]
                elif line.startswith("# base timestamp:"):
                    if data.base_timestamp is not None:
                        raise UserError(f"{p}:{no}: base timestamp defined twice")
                    try:
                        data.base_timestamp = int(line.split(":", 1)[1])
                    except ValueError:
                        raise UserError(f"{p}:{no}: bad base timestamp {line.strip()!r}") from None
                continue
            fields = line.split()
            if not fields:
                continue
            _parse_event(p, no, line, fields, data)
    if data.first is None:
        raise UserError(f"{p}: the log has no events")
    if not data.delays:
        raise UserError(f"{p}: the log has no departures (mm-throughput-graph needs one)")
    return data


def _parse_event(p: Path, no: int, line: str, fields: list[str], data: MahimahiLogData) -> None:
    where = f"{p}:{no}: {line.strip()!r}"
    if len(fields) < 3 or not fields[0].isdigit() or not fields[2].isdigit():
        raise UserError(f"{where}: expected 'timestamp event bytes [delay]' with whole numbers")
    if data.base_timestamp is None:
        raise UserError(f"{p}:{no}: event before the '# base timestamp:' line")
    t = int(fields[0]) - data.base_timestamp
    event = fields[1]
    if event == "d":
        # `t d packets bytes`: counted as loss; not part of mm-throughput-graph's numbers.
        data.dropped_packets += int(fields[2])
        return
    if data.first is None or data.last is None:
        data.first = data.last = t
    data.last = max(data.last, t)
    bits = int(fields[2]) * 8
    if event == "+":
        data.arrivals += 1
        data.arrival_bits += bits
    elif event == "#":
        data.capacity_bits += bits
    elif event == "-":
        if len(fields) < 4 or not fields[3].isdigit():
            raise UserError(f"{where}: a departure is 'timestamp - bytes delay'")
        delay = int(fields[3])
        if t - delay < 0:
            raise UserError(f"{where}: delay {delay} ms is before the log's start")
        data.departures += 1
        data.departure_bits += bits
        data.delays.append(delay)
        sent = t - delay
        data.signal[sent] = min(delay, data.signal.get(sent, delay))
    else:
        raise UserError(f"{where}: unknown event {event!r} (expected +, #, - or d)")


def signal_delays_mm(signal: dict[int, int]) -> np.ndarray:
    """mm-throughput-graph's per-millisecond signal delays (its loop, in numpy order)."""
    lo, hi = min(signal), max(signal)
    out = np.empty(hi - lo + 1, dtype=np.float64)
    nxt = 0.0
    for ts in range(hi, lo - 1, -1):
        own = signal.get(ts)
        nxt = float(own) if own is not None else nxt + 1.0
        out[ts - lo] = nxt
    return out


def analyze_mahimahi(data: MahimahiLogData) -> dict[str, Any]:
    assert data.first is not None and data.last is not None
    duration_ms = data.last - data.first

    def mbps(bits: int) -> float | None:
        return bits / duration_ms / 1000.0 if duration_ms > 0 else None

    capacity = mbps(data.capacity_bits) if data.capacity_bits else None
    throughput = mbps(data.departure_bits)
    p95s = percentile95_mahimahi(signal_delays_mm(data.signal))
    direction = {"downlink": "down", "uplink": "up"}.get(data.link, data.link)
    return {
        direction: {
            "capacity_mbps": capacity,
            "throughput_mbps": throughput,
            "utilization": throughput / capacity if capacity and throughput is not None else None,
            "p95_queue_delay_ms": percentile95_mahimahi(np.asarray(data.delays, dtype=float)),
            "p95_signal_delay_ms": p95s,
            "loss_rate": data.dropped_packets / data.arrivals if data.arrivals else None,
            "power": throughput * 1000.0 / p95s if throughput is not None and p95s else None,
            "ingress_mbps": mbps(data.arrival_bits),
            "p95_one_way_delay_ms": None,  # mm-link logs no propagation delay
            "duration_s": duration_ms / 1000.0,
            "arrivals": data.arrivals,
            "departures": data.departures,
            "drops": {"link": data.dropped_packets} if data.dropped_packets else {},
        }
    }

"""Benchmark against real sockets on 127.0.0.1, and a saturating UDP "blast" for log runs.

Every measurement runs three processes: a UDP sender, the relay (the real CLI, spawned like
`EmulatorProcess`) and a sink. Data flows server -> client (the downlink): the sink plays the
client and first sends a hello through the relay, so the relay opens its per-client upstream
socket; the sender plays the server and answers that address. Payloads carry a sequence number
and the send time on the shared CLOCK_MONOTONIC.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

import numpy as np

from pccstream.child_process import die_with_parent
from pccstream.emulator.analyze import analyze_file
from pccstream.emulator.scenario import load_scenario
from pccstream.emulator.trace import parse_rate
from pccstream.errors import UserError
from pccstream.paths import child_process_env
from pccstream.stats import percentile

PAYLOAD = 1472  # 1500-byte IPv4 packets
WIRE = PAYLOAD + 28
_HDR = struct.Struct("!QQ")


# --------------------------------------------------------------------------------------------
# processes


def _sender(port_q: Any, rate_bps: float | None, duration_s: float) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    port_q.put(sock.getsockname()[1])
    sock.settimeout(30)
    _, peer = sock.recvfrom(2048)  # the hello, via the relay's per-client socket
    buf = bytearray(PAYLOAD)
    mono = time.monotonic_ns
    interval_ns = WIRE * 8 * 1e9 / rate_bps if rate_bps else 0.0
    start = mono()
    end = start + int(duration_s * 1e9)
    seq = 0
    sendto = sock.sendto
    pack = _HDR.pack_into
    while True:
        now = mono()
        if now >= end:
            break
        if interval_ns:
            due = start + seq * interval_ns
            if now < due:
                gap = (due - now) / 1e9
                if gap > 2e-4:
                    time.sleep(gap - 1e-4)
                continue
        pack(buf, 0, seq, mono())
        with contextlib.suppress(OSError):  # a full buffer just loses the packet
            sendto(buf, peer)
        seq += 1
    port_q.put(seq)


# Linux SO_TIMESTAMPNS / SCM_TIMESTAMPNS (not exported by Python's socket module): the kernel
# stamps each datagram when it is queued to the sink's socket, so the sink's own scheduling
# latency does not count as emulator error.
_SO_TIMESTAMPNS = 35
_TIMESPEC = struct.Struct("@qq")


def _realtime_minus_monotonic() -> int:
    best: tuple[int, int] | None = None
    for _ in range(50):
        a = time.monotonic_ns()
        r = time.time_ns()
        b = time.monotonic_ns()
        if best is None or b - a < best[0]:
            best = (b - a, r - (a + b) // 2)
    assert best is not None
    return best[1]


def _sink(res_q: Any, relay_port: int, duration_s: float, keep: bool, grace_s: float) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    kernel_ts = True
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
    except OSError:
        kernel_ts = False
    offset = _realtime_minus_monotonic()
    sock.sendto(b"hello", ("127.0.0.1", relay_port))
    sock.settimeout(2.0)
    mono = time.monotonic_ns
    recvmsg_into = sock.recvmsg_into
    buf = bytearray(65536)
    bufs = [buf]
    recs: list[tuple[int, int, int, int]] = []
    n = 0
    nbytes = 0
    first = last = 0
    deadline = mono() + int((duration_s + grace_s) * 1e9)
    while mono() < deadline:
        try:
            size, anc, _, _ = recvmsg_into(bufs, 64)
        except TimeoutError:
            if n:
                break
            continue
        t = mono()
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS:
                sec, nsec = _TIMESPEC.unpack_from(data)
                t = sec * 1_000_000_000 + nsec - offset
        if size < _HDR.size:
            continue
        if not n:
            first = t
        last = t
        n += 1
        nbytes += size
        if keep:
            seq, sent = _HDR.unpack_from(buf, 0)
            recs.append((t, seq, sent, size))
    res_q.put({"n": n, "bytes": nbytes, "first": first, "last": last, "recs": recs,
               "kernel_timestamps": kernel_ts})


def _cpu_seconds(pid: int) -> float | None:
    """user + system CPU time of a process (Linux /proc), None if unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _relay_argv(relay_args: list[str], upstream_port: int) -> list[str]:
    return [sys.executable, "-m", "pccstream.emulator", "emulate", "--listen", "127.0.0.1:0",
            "--upstream", f"127.0.0.1:{upstream_port}", *relay_args]


def run_path(relay_args: list[str], rate_bps: float | None, duration_s: float,
             keep: bool, grace_s: float = 10.0) -> dict[str, Any]:
    """Run sender -> relay (downlink) -> sink once; returns the sink's records. The sink
    stops 2 s after the last packet or `grace_s` after the sender's end, whichever is first."""
    ctx = mp.get_context("spawn")
    sq: Any = ctx.Queue()
    rq: Any = ctx.Queue()
    sender = ctx.Process(target=_sender, args=(sq, rate_bps, duration_s))
    sender.start()
    try:
        port = sq.get(timeout=30)
        relay = subprocess.Popen(_relay_argv(relay_args, port), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=child_process_env(), text=True,
                                 preexec_fn=die_with_parent)
        try:
            assert relay.stdout is not None
            line = relay.stdout.readline()
            if not line.startswith("listening on"):
                err = relay.stderr.read() if relay.stderr else ""
                raise UserError(f"bench: relay failed to start: {err.strip()}")
            relay_port = int(line.split()[2].rpartition(":")[2])
            sink = ctx.Process(target=_sink, args=(rq, relay_port, duration_s, keep, grace_s))
            sink.start()
            result = rq.get(timeout=duration_s + 60)
            sink.join()
            result["sent"] = sq.get(timeout=30)
            result["relay_cpu_s"] = _cpu_seconds(relay.pid)
        finally:
            relay.terminate()
            relay.wait(timeout=10)
    finally:
        sender.join(timeout=30)
    return result


# --------------------------------------------------------------------------------------------
# measurements


def _pcts(x: np.ndarray) -> dict[str, float]:
    return {"p50": round(percentile(x, 50) or 0.0, 4),
            "p99": round(percentile(x, 99) or 0.0, 4),
            "max": round(float(np.max(x)), 4)}


def _read_departures(log: str) -> tuple[int, np.ndarray]:
    base = 0
    deps: list[float] = []
    with open(log, encoding="ascii") as fh:
        for line in fh:
            if line.startswith("# base_monotonic_ns:"):
                base = int(line.split(":")[1])
            elif " d - " in line:
                deps.append(float(line.split()[0]))
    return base, np.asarray(deps)


def bench_unshaped(duration_s: float, rate_bps: float | None) -> dict[str, Any]:
    r = run_path([], rate_bps, duration_s, keep=False)
    span = (r["last"] - r["first"]) / 1e9
    wire_bits = r["n"] * WIRE * 8
    cpu = r.get("relay_cpu_s")
    out = {"offered_mbps": None if rate_bps is None else rate_bps / 1e6,
           "sent_packets": r["sent"], "received_packets": r["n"],
           "forwarded_mbps": round(wire_bits / span / 1e6, 1) if span > 0 else None}
    if cpu:
        # Load-independent figure: what the relay could forward with one core to itself
        # (includes its start-up CPU, so slightly pessimistic).
        out["relay_cpu_s"] = round(cpu, 2)
        out["relay_us_per_packet"] = round(cpu / r["n"] * 1e6, 2)
        out["relay_mbps_per_core"] = round(wire_bits / cpu / 1e6, 1)
    return out


def bench_saturated(duration_s: float, rate_bps: float = 20e6,
                    realtime: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        log = str(Path(tmp) / "bench.log")
        args = ["--down", f"{rate_bps / 1e6:g}mbit", "--queue", "200pkts", "--log", log]
        r = run_path(args + (["--realtime"] if realtime else []), rate_bps * 1.2, duration_s,
                     keep=True)
        base, deps = _read_departures(log)
    recs = np.asarray(r["recs"], dtype=np.int64)
    out: dict[str, Any] = {"configured_mbps": rate_bps / 1e6, "offered_mbps": rate_bps * 1.2 / 1e6,
                           "received_packets": int(len(recs)), "logged_departures": int(len(deps))}
    if len(recs) < 100:
        out["error"] = "too few packets received"
        return out
    # Delivered rate over the steady part (skip the first 0.5 s while the queue fills).
    t = recs[:, 0]
    steady = t >= t[0] + 500_000_000
    ts = t[steady]
    sizes = recs[steady, 3] + 28
    rate = (sizes[1:].sum() * 8) / ((ts[-1] - ts[0]) / 1e9)
    out["delivered_mbps"] = round(rate / 1e6, 4)
    out["delivered_error_pct"] = round(100 * (rate - rate_bps) / rate_bps, 3)
    # Departure-time error: k-th logged departure vs the k-th packet at the sink (FIFO).
    n = min(len(deps), len(recs))
    sched_ns = base + deps[:n] * 1e6
    err_ms = (t[:n] - sched_ns) / 1e6
    out["departure_error_ms"] = _pcts(np.abs(err_ms))
    out["departure_error_signed_ms"] = {"mean": round(float(err_ms.mean()), 4),
                                        "min": round(float(err_ms.min()), 4)}
    out["in_order"] = bool(np.all(np.diff(recs[:, 1]) > 0))
    return out


def bench_delay(
    duration_s: float, delay_ms: float = 30.0, rate_bps: float = 20e6, realtime: bool = False
) -> dict[str, Any]:
    args = ["--delay", f"{delay_ms:g}"] + (["--realtime"] if realtime else [])
    r = run_path(args, rate_bps, duration_s, keep=True)
    recs = np.asarray(r["recs"], dtype=np.int64)
    if len(recs) == 0:
        return {"error": "nothing received"}
    err = (recs[:, 0] - recs[:, 2]) / 1e6 - delay_ms
    return {"delay_ms": delay_ms, "offered_mbps": rate_bps / 1e6, "packets": int(len(recs)),
            "added_delay_error_ms": _pcts(np.abs(err)),
            "added_delay_mean_ms": round(float(err.mean() + delay_ms), 4)}


def run_bench(duration_s: float = 5.0, progress: IO[str] | None = None) -> dict[str, Any]:
    def say(msg: str) -> None:
        if progress is not None:
            print(msg, file=progress, flush=True)

    load_before = os.getloadavg()
    say("saturated 20 Mbit/s (normal priority) ...")
    sat = bench_saturated(duration_s)
    say("added delay 30 ms (normal priority) ...")
    dly = bench_delay(duration_s)
    say("saturated 20 Mbit/s (--realtime) ...")
    sat_rt = bench_saturated(duration_s, realtime=True)
    say("added delay 30 ms (--realtime) ...")
    dly_rt = bench_delay(duration_s, realtime=True)
    say("unshaped, unlimited sender ...")
    unl = bench_unshaped(duration_s, None)
    say("unshaped, sender paced at 400 Mbit/s ...")
    paced = bench_unshaped(duration_s, 400e6)
    best = max(x["forwarded_mbps"] or 0 for x in (unl, paced))

    def targets(s: dict[str, Any], d: dict[str, Any]) -> dict[str, bool]:
        return {
            "delivered_rate_within_1pct": bool(abs(s.get("delivered_error_pct", 100)) <= 1.0),
            "departure_error_p99_le_1ms": bool(
                s.get("departure_error_ms", {}).get("p99", 99) <= 1.0
            ),
            "added_delay_error_p99_le_1ms": bool(
                d.get("added_delay_error_ms", {}).get("p99", 99) <= 1.0
            ),
            "unshaped_ge_300mbps": bool(best >= 300),
        }

    return {
        "saturated_20mbit": sat,
        "delay_30ms": dly,
        "saturated_20mbit_realtime": sat_rt,
        "delay_30ms_realtime": dly_rt,
        "unshaped": {"unlimited_sender": unl, "paced_400mbps": paced, "best_mbps": best},
        "targets_met": targets(sat, dly),
        "targets_met_realtime": targets(sat_rt, dly_rt),
        "measurement": "sink times are kernel receive timestamps (SO_TIMESTAMPNS) mapped to "
        "CLOCK_MONOTONIC; errors are |actual - scheduled|",
        "machine": {"cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
                    "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
        "duration_s_each": duration_s,
    }


def run_blast(scenario: str, params: dict[str, str], duration_s: float, rate: str, log: str,
              seed: int | None) -> dict[str, Any]:
    """Saturate the scenario's downlink with UDP through the relay, logging; then analyze."""
    sc = load_scenario(scenario, params)
    if rate == "auto":
        cap = sc.down.build_trace()
        if cap is None:
            raise UserError(f"blast: scenario {sc.name!r} has an unshaped downlink; give --rate")
        rate_bps = 1.5 * cap.average_bps()
    else:
        rate_bps = parse_rate(rate, "--rate")
    args = ["--scenario", scenario, "--log", log]
    for k, v in params.items():
        args += ["--param", f"{k}={v}"]
    if seed is not None:
        args += ["--seed", str(seed)]
    # Stop right after the sender: what is still queued then is not part of the run.
    r = run_path(args, rate_bps, duration_s, keep=False, grace_s=0.3)
    return {"scenario": sc.name, "offered_mbps": round(rate_bps / 1e6, 3), "sent": r["sent"],
            "received": r["n"], "log": log, "analysis": analyze_file(log)}


if __name__ == "__main__":
    print(json.dumps(run_bench(), indent=2))

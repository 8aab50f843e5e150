"""`pccstream bench transfer`: bulk transfer with the real server and a headless aioquic client
through the emulator, per congestion controller (arm), with medians over runs.

Each run gets a fresh emulator (seed = base seed + run index, so every arm of a run sees the
same network realization) and a fresh server process per arm. Arms run in a seeded random
order within a run so no arm always goes first. Link metrics come from the emulator's log
(the bottleneck's own view); RTTs from the server's controller telemetry.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pccstream.ab.experiment import wait_for_load
from pccstream.ab.starvation import starvation
from pccstream.bench.stats import convergence_time
from pccstream.cc.base import DEFAULT_MAX_DATAGRAM_SIZE
from pccstream.cc.registry import create_controller
from pccstream.emulator.analyze import analyze, parse_log
from pccstream.emulator.lateness import parse_summary
from pccstream.emulator.relay import EmulatorProcess
from pccstream.errors import Interrupted, UserError
from pccstream.harness.processes import (
    BULK_SEGMENTS,
    ServerProcess,
    endpoint_priority,
    make_bulk_media,
)
from pccstream.protocol import Kind, Request, Status
from pccstream.stats import jain_index, median, percentile
from pccstream.wt_client import WebTransportClient

BIN_S = 0.5


@dataclass(frozen=True)
class Arm:
    """A controller name with per-session parameters, written `NAME[:KEY=VALUE...]`."""

    cc: str
    params: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return ":".join([self.cc, *(f"{k}={v}" for k, v in self.params.items())])

    @classmethod
    def parse(cls, text: str) -> Arm:
        name, *pairs = text.strip().split(":")
        params: dict[str, str] = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep or not key:
                raise UserError(f"arm {text!r}: parameter {pair!r} is not KEY=VALUE")
            params[key] = value
        create_controller(name, params)  # refuse unknown names and bad parameters now
        return cls(name, params)


@dataclass
class TransferSettings:
    arms: list[Arm]
    scenario: str
    scenario_params: dict[str, str] = field(default_factory=dict)
    duration_s: float = 30.0
    flows: int = 1
    runs: int = 1
    seed: int = 1
    compete: bool = False  # all arms share the link at once (one group of flows each)
    fairness_window_s: float = 20.0
    outstanding: int = 4  # requests in flight per flow, so the sender is never app-limited
    log_dir: Path | None = None
    realtime_endpoints: bool = True  # client and server via `endpoint_priority`
    max_load: float | None = None  # before each run, wait until the 1-minute load is at most
    max_load_wait_s: float = 600.0
    datagram_size: int = DEFAULT_MAX_DATAGRAM_SIZE  # the server's largest UDP payload


@dataclass
class _FlowRecord:
    arm: Arm
    series_bps: list[float] = field(default_factory=list)
    bytes: int = 0
    rtts_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    telemetry: list[dict[str, Any]] = field(default_factory=list)  # the server's records


async def _run_flow(
    port: int, arm: Arm, duration_s: float, outstanding: int, record: _FlowRecord
) -> None:
    async with WebTransportClient.open(
        "127.0.0.1", port, cc=arm.cc, params=_cc_query(arm)
    ) as client:
        loop = asyncio.get_running_loop()
        end = loop.time() + duration_s
        next_index = 0

        async def worker() -> None:
            nonlocal next_index
            while loop.time() < end:
                index = next_index % BULK_SEGMENTS
                next_index += 1
                response = await client.get(Request(Kind.SEGMENT, 0, index))
                if response.header.status != Status.OK:
                    record.errors.append(response.body.decode(errors="replace"))
                    return

        workers = [asyncio.ensure_future(worker()) for _ in range(outstanding)]
        last = 0
        while loop.time() < end:
            await asyncio.sleep(BIN_S)
            now_bytes = client.response_bytes_received
            record.series_bps.append((now_bytes - last) * 8 / BIN_S)
            last = now_bytes
        record.bytes = client.response_bytes_received
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        record.telemetry = list(client.telemetry)
        record.rtts_ms = [
            float(r["latest_rtt_ms"])
            for r in client.telemetry
            if r.get("type") == "sample" and r.get("latest_rtt_ms")
        ]


def _cc_query(arm: Arm) -> dict[str, str]:
    return {f"cc.{key}": value for key, value in arm.params.items()}


async def _one_run(
    settings: TransferSettings, arms: list[Arm], run: int, media: Path, log_path: Path
) -> dict[str, Any]:
    server = ServerProcess(
        media, extra_args=["--max-datagram-size", str(settings.datagram_size)])
    with endpoint_priority(settings.realtime_endpoints):
        info = await server.start()  # the child inherits the scheduling policy
    emulator = EmulatorProcess(
        upstream=f"127.0.0.1:{info['quic_port']}",
        scenario=settings.scenario,
        params=settings.scenario_params or None,
        seed=settings.seed + run,
        log=str(log_path),
        # Real-time priority keeps the link's timing exact while server and client load the
        # cores (docs/emulator.md); without the privilege it warns and runs normally.
        realtime=True,
    )
    records: list[_FlowRecord] = []
    load_start = os.getloadavg()[0]
    try:
        port = await emulator.start()
        cpu_before = server.cpu_seconds()
        records = [_FlowRecord(arm) for arm in arms for _ in range(settings.flows)]
        started = time.monotonic()
        with endpoint_priority(settings.realtime_endpoints):
            await asyncio.gather(
                *(
                    _run_flow(port, r.arm, settings.duration_s, settings.outstanding, r)
                    for r in records
                )
            )
        wall_s = time.monotonic() - started
        cpu_s = server.cpu_seconds() - cpu_before
    finally:
        await emulator.close()
        await server.close()
    parsed = parse_log(log_path)
    link = analyze(parsed).get("down", {})
    lateness = parse_summary(parsed.header)
    if settings.log_dir is not None:
        # Beside the kept emulator log: each flow's controller telemetry, one JSON a line.
        for i, record in enumerate(records):
            path = log_path.with_name(f"{log_path.stem}-flow{i}.telemetry.jsonl")
            with path.open("w") as out:
                out.writelines(json.dumps(r) + "\n" for r in record.telemetry)
    outcome = {
        **_summarize_run(settings, run, records, link, cpu_s, wall_s),
        "loadavg_start": round(load_start, 2),
        "host_cpus": os.cpu_count(),
        "cpu_window_s": round(wall_s, 3),
        "emulator_late_share": (lateness or {}).get("stalled_share"),
        "emulator_timer_lateness": lateness,
    }
    return {**outcome, **starvation(outcome).columns()}


def _summarize_run(
    settings: TransferSettings,
    run: int,
    records: list[_FlowRecord],
    link: dict[str, Any],
    cpu_s: float,
    wall_s: float,
) -> dict[str, Any]:
    rtts = [rtt for r in records for rtt in r.rtts_ms]
    total_bytes = sum(r.bytes for r in records)
    window_bins = max(1, round(settings.fairness_window_s / BIN_S))
    flow_rates = [
        sum(r.series_bps[-window_bins:]) / max(1, len(r.series_bps[-window_bins:])) for r in records
    ]
    capacity_bps = (link.get("capacity_mbps") or 0.0) * 1e6
    fair_share = capacity_bps / len(records) if records else 0.0
    one_s_series = [_rebin(r.series_bps, round(1.0 / BIN_S)) for r in records]
    min_rtt = min(rtts) if rtts else None
    p95_rtt = percentile(rtts, 95)
    return {
        "run": run,
        "seed": settings.seed + run,
        "arms": [r.arm.label for r in records],
        "throughput_mbps": link.get("throughput_mbps"),
        "capacity_mbps": link.get("capacity_mbps"),
        "utilization": link.get("utilization"),
        "p95_queue_delay_ms": link.get("p95_queue_delay_ms"),  # self-inflicted delay
        "p95_signal_delay_ms": link.get("p95_signal_delay_ms"),
        "p95_one_way_delay_ms": link.get("p95_one_way_delay_ms"),  # includes propagation
        "loss_rate": link.get("loss_rate"),
        "power": link.get("power"),
        "rtt_min_ms": min_rtt,
        "rtt_p50_ms": percentile(rtts, 50),
        "rtt_p95_ms": p95_rtt,
        "rtt_p95_inflation_ms": p95_rtt - min_rtt
        if p95_rtt is not None and min_rtt is not None
        else None,
        "flow_throughput_mbps": [
            round(r.bytes * 8 / settings.duration_s / 1e6, 4) for r in records
        ],
        "flow_window_mbps": [round(rate / 1e6, 4) for rate in flow_rates],
        "jain_index": jain_index(flow_rates) if len(records) > 1 else None,
        "convergence_s": [convergence_time(s, 1.0, fair_share / 1e6 * 1e6) for s in one_s_series]
        if len(records) > 1
        else None,
        "server_cpu_s": round(cpu_s, 3),
        "server_cpu_s_per_gb": round(cpu_s / (total_bytes / 1e9), 2) if total_bytes else None,
        "client_goodput_mbps": round(total_bytes * 8 / wall_s / 1e6, 4) if wall_s > 0 else None,
        "errors": [e for r in records for e in r.errors],
        "ack_silences": _ack_silences(records),
    }


def _ack_silences(records: list[_FlowRecord]) -> list[dict[str, Any] | None] | None:
    """Per flow, the ACK silences its controller judged held or out by the end (`vivace-lte`;
    None when no flow's controller judges them)."""
    verdicts: list[dict[str, Any] | None] = []
    for record in records:
        last = next((r for r in reversed(record.telemetry)
                     if r.get("type") == "sample" and "ack_silences_held" in r), None)
        verdicts.append(None if last is None else {
            "held": last["ack_silences_held"], "out": last["ack_silences_out"],
            "hold_share": last.get("ack_silence_hold_share")})
    return verdicts if any(v is not None for v in verdicts) else None


def _rebin(series: list[float], factor: int) -> list[float]:
    return [
        sum(series[i : i + factor]) / factor for i in range(0, len(series) - factor + 1, factor)
    ]


MEDIAN_KEYS = (
    "throughput_mbps",
    "utilization",
    "p95_queue_delay_ms",
    "p95_signal_delay_ms",
    "p95_one_way_delay_ms",
    "loss_rate",
    "power",
    "rtt_p50_ms",
    "rtt_p95_ms",
    "rtt_p95_inflation_ms",
    "jain_index",
    "server_cpu_s_per_gb",
)


async def run_transfer(
    settings: TransferSettings, progress: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    rng = random.Random(settings.seed)
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="pccstream-bench-") as tmp:
        media = make_bulk_media(Path(tmp) / "media")
        log_dir = settings.log_dir or Path(tmp)
        log_dir.mkdir(parents=True, exist_ok=True)
        groups = [settings.arms] if settings.compete else [[arm] for arm in settings.arms]
        for run in range(settings.runs):
            order = list(groups)
            rng.shuffle(order)
            for group in order:
                label = "+".join(arm.label for arm in group)
                where = f"{settings.scenario} for {settings.duration_s:g} s"
                waited = 0.0
                if settings.max_load is not None:
                    waited = await wait_for_load(settings.max_load, settings.max_load_wait_s)
                    if waited > 0:
                        progress(f"  waited {waited:.0f} s for the load to fall to "
                                 f"{settings.max_load:g}")
                progress(f"run {run + 1}/{settings.runs}: {label} on {where}")
                log_path = log_dir / f"run{run}-{label.replace(':', '_')}.log"
                outcome = await _one_run(settings, group, run, media, log_path)
                outcome["log"] = str(log_path) if settings.log_dir else None
                outcome["load_wait_s"] = waited
                results.setdefault(label, []).append(outcome)
                progress(
                    f"  throughput {_fmt(outcome['throughput_mbps'])} Mbit/s, utilization "
                    f"{_fmt(outcome['utilization'])}, p95 RTT {_fmt(outcome['rtt_p95_ms'])} ms, "
                    f"loss {_fmt(outcome['loss_rate'])}{_lateness(outcome)}"
                    + (f" CPU-STARVED ({outcome['cpu_starved_reason']})"
                       if outcome["cpu_starved"] else "")
                )
    return {
        "benchmark": "transfer",
        "scenario": settings.scenario,
        "scenario_params": settings.scenario_params,
        "duration_s": settings.duration_s,
        "flows": settings.flows,
        "runs": settings.runs,
        "seed": settings.seed,
        "compete": settings.compete,
        "realtime_endpoints": settings.realtime_endpoints,
        "datagram_size": settings.datagram_size,
        "arms": {label: summarize_arm(runs) for label, runs in results.items()},
    }


def summarize_arm(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """An arm's runs with their medians: over the runs not CPU-starved, or over all of them
    when every run was (`median_runs` says which)."""
    starved = [r["run"] for r in runs if r.get("cpu_starved")]
    counted = [r for r in runs if not r.get("cpu_starved")] or runs
    return {
        "median": {key: median([r.get(key) for r in counted]) for key in MEDIAN_KEYS},
        "median_runs": len(counted),
        "starved_runs": starved,
        "median_all_runs": {key: median([r.get(key) for r in runs]) for key in MEDIAN_KEYS},
        "runs": runs,
    }


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _lateness(outcome: dict[str, Any]) -> str:
    lateness = outcome.get("emulator_timer_lateness") or {}
    share = lateness.get("stalled_share")
    if share is None:
        return ""
    return f", emulator late {100 * share:.1f} % (latest {lateness.get('max_ms', 0):.1f} ms)"


def run_transfer_sync(
    settings: TransferSettings, progress: Callable[[str], None]
) -> dict[str, Any]:
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(run_transfer(settings, progress))
    kept = f"; the emulator logs so far are in {settings.log_dir}" if settings.log_dir else ""
    raise Interrupted(f"no result (results are printed at the end){kept}")

"""A fake runner: deterministic records with no browser, server or emulator."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pccstream.ab.design import Design, Slot, schedule
from pccstream.ab.experiment import run_experiment
from pccstream.ab.progress import Progress
from pccstream.ab.store import Store

# Per-arm true means, so the report and statistics have something known to find.
BUFFERING = {"vivace": 0.02, "cubic": 0.20, "reno": 0.25}


def fake_record(design: Design, slot: Slot) -> dict[str, Any]:
    rng = random.Random(f"{slot.network_seed}:{slot.arm}")
    base = BUFFERING.get(slot.arm.split(":")[0], 0.1)
    ratio = max(0.0, base + rng.uniform(-0.01, 0.01))
    t = [i * 0.5 for i in range(20)]
    return {
        "buffering_ratio": ratio,
        "startup_delay_ms": 800 + rng.uniform(0, 200),
        "stall_count": 1.0,
        "stall_seconds": ratio * design.duration_s,
        "play_seconds": (1 - ratio) * design.duration_s,
        "mean_bitrate_kbps": float(design.bitrate_kbps or 0),
        "bitrate_switches": 0.0,
        "ended": 0,
        "player_errors": 0,
        "capacity_mbps": 3.3,
        "throughput_mbps": 3.0 + rng.uniform(-0.1, 0.1),
        "utilization": 0.9,
        "p95_queue_delay_ms": 100 + 300 * base + rng.uniform(-5, 5),
        "p95_signal_delay_ms": 150 + 300 * base,
        "loss_rate": 0.0001,
        "server_cpu_s": 1.0,
        "emulator_late_share": 0.02 if slot.block == 0 else 0.01,
        "emulator_late_max_ms": 12.5,
        "viewers": [{"bufferingRatio": ratio, "segments": [], "error": None}],
        "link": {"down": {"throughput_mbps": 3.0}},
        "series": {
            "player": [
                [
                    {"t_s": x, "state": "stalled" if 3 <= x < 4 else "playing", "buffer_s": x % 5}
                    for x in t
                ]
            ],
            "link": {
                "t_s": t,
                "capacity_mbps": [3.3] * 20,
                "throughput_mbps": [3.0] * 20,
                "queue_delay_ms": [50.0] * 20,
            },
        },
        "telemetry": [
            [{"type": "hello", "cc": slot.arm}]
            + [
                {
                    "type": "sample",
                    "t_ms": x * 1000,
                    "pacing_rate_bps": 3e6,
                    "srtt_ms": 60.0,
                    "latest_rtt_ms": 55.0,
                }
                for x in t
            ]
        ],
        "config": {"design": design.to_dict(), "network_seed": slot.network_seed},
        "versions": {"pccstream": "test"},
        "overhead_s": 0.5,
    }


class FakeRunner:
    """Records what it ran; raises after `crash_after` runs (a simulated crash)."""

    def __init__(self, crash_after: int | None = None) -> None:
        self.crash_after = crash_after
        self.ran: list[tuple[int, str]] = []

    async def run(self, design: Design, slot: Slot) -> dict[str, Any]:
        if self.crash_after is not None and len(self.ran) >= self.crash_after:
            raise RuntimeError("simulated crash")
        self.ran.append((slot.block, slot.arm))
        return fake_record(design, slot)


class PlayingRunner(FakeRunner):
    """A fake run that takes the design's duration in real time (nothing plays)."""

    async def run(self, design: Design, slot: Slot) -> dict[str, Any]:
        await asyncio.sleep(design.duration_s)
        return await super().run(design, slot)


@contextlib.asynccontextmanager
async def playing_runner(design: Design, job: object) -> AsyncIterator[PlayingRunner]:
    """`pccstream.ab.cluster.RunnerFactory` of PlayingRunner, importable by Dask workers."""
    yield PlayingRunner()


class DyingRunner(PlayingRunner):
    """Kills its own process (a Dask worker) at the second run of block 0, once: a lost worker.
    The marker file named by $PCCSTREAM_TEST_DIE_ONCE says it has happened."""

    async def run(self, design: Design, slot: Slot) -> dict[str, Any]:
        marker = Path(os.environ["PCCSTREAM_TEST_DIE_ONCE"])
        if slot.block == 0 and slot.position == 1 and not marker.exists():
            marker.write_text(str(os.getpid()))
            await asyncio.sleep(0.5)
            os._exit(1)
        return await super().run(design, slot)


@contextlib.asynccontextmanager
async def dying_runner(design: Design, job: object) -> AsyncIterator[DyingRunner]:
    yield DyingRunner()


def stored_experiment(path: Path, design: Design, runner: FakeRunner) -> Path:
    """Run `design` with `runner` into a new results database at `path`, quietly."""
    store = Store(path)
    progress = Progress(len(schedule(design)), 0, 1.0, stream=io.StringIO())
    asyncio.run(run_experiment(store, design, runner, progress=progress))
    store.close()
    return path

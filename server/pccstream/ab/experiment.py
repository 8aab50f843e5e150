"""The experiment loop: run the schedule's missing slots with a runner, commit each run.

The runner is injected (`Runner` protocol), so tests drive the loop with a fake. A run is
stored only when complete, in one transaction: a crash or kill loses at most the run in
progress, and `resume` recomputes the same schedule and skips the stored (block, arm) pairs.
Each slot is claimed in the database before it runs, so a second `--resume` on the same
database skips the slots another live process is running, and says which process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from pccstream.ab.design import Design, Slot, schedule
from pccstream.ab.progress import Progress
from pccstream.ab.runner import RunFailed, Runner
from pccstream.ab.starvation import starvation
from pccstream.ab.store import Store
from pccstream.errors import RunError, UserError
from pccstream.harness.cpu import cpu_model

RETRIES = 1  # a run that measured nothing (RunFailed) is tried once more, then we stop


@dataclass
class Outcome:
    experiment_id: str
    total: int
    skipped: int
    ran: int
    wall_s: float
    overheads_s: list[float]
    # Slots skipped because another live process had claimed them.
    claimed_elsewhere: int = 0


def prepare(store: Store, design: Design, *, resume: bool, command: str | None = None) -> int:
    """Register the experiment (or find it again with `resume`); returns the runs stored.

    With `resume`, the runs of any stored experiment whose design differs only in `runs` are
    adopted for the blocks both have: block b has the same network seed and arm order in
    both schedules, so they are exactly the runs this design would make (an experiment is
    extended with more blocks without re-running the first ones)."""
    existing = store.experiment(design.experiment_id)
    done = len(store.completed(design.experiment_id)) if existing is not None else 0
    total = len(schedule(design))
    if existing is None:
        store.add_experiment(design, command)
    elif not resume:
        raise UserError(
            f"{store.path} already holds this experiment ({design.experiment_id}, "
            f"{done}/{total} runs done): pass --resume to continue it, or change --seed or --db"
        )
    if resume:
        for other in store.experiments():
            if other["id"] == design.experiment_id:
                continue
            other_design = Design.from_dict(json.loads(other["design_json"]))
            if replace(other_design, runs=design.runs) == design:
                done += store.adopt_runs(other["id"], design.experiment_id, design.runs)
    return done


def run_summary(record: dict[str, Any]) -> str:
    def fmt(key: str, scale: float = 1.0, unit: str = "") -> str:
        value = record.get(key)
        if value is None:
            return "n/a"
        value *= scale
        return f"{value:.0f}{unit}" if abs(value) >= 100 else f"{value:.3g}{unit}"

    parts = [
        f"buffering {fmt('buffering_ratio', 100, ' %')}",
        f"startup {fmt('startup_delay_ms', 1, ' ms')}",
        f"bitrate {fmt('mean_bitrate_kbps', 1, ' kbit/s')}",
        f"throughput {fmt('throughput_mbps', 1, ' Mbit/s')}",
        f"p95 queue {fmt('p95_queue_delay_ms', 1, ' ms')}",
    ]
    dropped, decoded = record.get("dropped_frames"), record.get("decoded_frames")
    if dropped is not None and decoded is not None:
        near = record.get("dropped_frames_near_stalls")
        stalls = f" ({near:.0f} near stalls)" if near else ""
        parts.append(f"dropped {dropped:.0f}/{decoded:.0f} frames{stalls}")
    line = ", ".join(parts)
    if record.get("cpu_starved"):
        line += f" CPU-STARVED ({record.get('cpu_starved_reason')})"
    return line


async def wait_for_load(
    max_load: float,
    max_wait_s: float,
    *,
    loadavg: Callable[[], tuple[float, float, float]] = os.getloadavg,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    poll_s: float = 5.0,
) -> float:
    """Wait until the 1-minute load average is at most `max_load` (at most `max_wait_s`);
    returns the seconds waited. Measurements on a shared machine are CPU-sensitive."""
    waited = 0.0
    while loadavg()[0] > max_load and waited < max_wait_s:
        step = min(poll_s, max_wait_s - waited)
        await sleep(step)
        waited += step
    return waited


async def run_experiment(
    store: Store,
    design: Design,
    runner: Runner,
    *,
    resume: bool = False,
    command: str | None = None,
    progress: Progress | None = None,
    expected_overhead_s: float = 6.0,
    max_load: float | None = None,
    max_load_wait_s: float = 600.0,
    loadavg: Callable[[], tuple[float, float, float]] = os.getloadavg,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Outcome:
    started = time.monotonic()
    prepare(store, design, resume=resume, command=command)
    slots = schedule(design)
    done = store.completed(design.experiment_id)
    todo = [slot for slot in slots if (slot.block, slot.arm) not in done]
    if progress is None:
        progress = Progress(
            len(slots), len(slots) - len(todo), design.duration_s + expected_overhead_s
        )
    overheads: list[float] = []
    claimed_elsewhere = 0
    ticker = asyncio.ensure_future(_tick(progress))
    try:
        for slot in todo:
            label = f"block {slot.block + 1}/{design.runs} {slot.arm}"
            refusal = store.claim(design.experiment_id, slot.block, slot.arm)
            if refusal is not None:
                progress.skip_run(label, refusal)
                claimed_elsewhere += 1
                continue
            progress.start_run(label)
            try:
                record = await _run_slot(
                    store, design, slot, runner, max_load, max_load_wait_s, loadavg, sleep
                )
            finally:
                store.release(design.experiment_id, slot.block, slot.arm)  # no-op once stored
            overheads.append(record["overhead_s"])
            progress.finish_run(run_summary(record))
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
    progress.close()
    return Outcome(
        design.experiment_id,
        len(slots),
        len(slots) - len(todo),
        len(todo) - claimed_elsewhere,
        time.monotonic() - started,
        overheads,
        claimed_elsewhere,
    )


async def _run_slot(
    store: Store,
    design: Design,
    slot: Slot,
    runner: Runner,
    max_load: float | None,
    max_load_wait_s: float,
    loadavg: Callable[[], tuple[float, float, float]],
    sleep: Callable[[float], Awaitable[None]],
) -> dict[str, Any]:
    """Run one claimed slot (a failed run is retried once) and commit its record."""
    record = await measure_slot(design, slot, runner, max_load, max_load_wait_s, loadavg, sleep)
    store.commit_run(design.experiment_id, record)
    return record


async def measure_slot(
    design: Design,
    slot: Slot,
    runner: Runner,
    max_load: float | None,
    max_load_wait_s: float,
    loadavg: Callable[[], tuple[float, float, float]] = os.getloadavg,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> dict[str, Any]:
    """Run one slot (a failed run is retried once): its complete record, ready to store, with
    the host it ran on (a cluster worker calls this too, pccstream.ab.cluster)."""
    load_wait_s = 0.0
    if max_load is not None:
        load_wait_s = await wait_for_load(max_load, max_load_wait_s, loadavg=loadavg, sleep=sleep)
    record: dict[str, Any] | None = None
    started_at = time.time()
    for attempt in range(RETRIES + 1):
        started_at = time.time()
        try:
            record = await runner.run(design, slot)
            break
        except RunFailed as exc:
            if attempt == RETRIES:
                raise RunError(
                    f"run block {slot.block} arm {slot.arm} failed twice: {exc}; "
                    "completed runs are stored, fix the cause and pass --resume"
                ) from None
    assert record is not None
    finished_at = time.time()
    record.update(
        slot=slot.index,
        block=slot.block,
        position=slot.position,
        arm=slot.arm,
        network_seed=slot.network_seed,
        started_at=started_at,
        finished_at=finished_at,
        wall_s=round(finished_at - started_at, 3),
    )
    config = record.setdefault("config", {})
    config["load_wait_s"] = round(load_wait_s, 1)
    config["max_load"] = max_load
    record.update(starvation(record).columns())
    if record.get("overhead_s") is None:
        record["overhead_s"] = round(record["wall_s"] - design.duration_s, 3)
    record.setdefault("worker_host", socket.gethostname())
    record.setdefault("cpu_model", cpu_model())
    return record


async def _tick(progress: Progress) -> None:
    while True:
        await asyncio.sleep(1.0)
        progress.tick()

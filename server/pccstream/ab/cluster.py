"""`pccstream ab --cluster`: the experiment's blocks as tasks on a Dask distributed cluster.

Who owns what:
- The client (the `pccstream ab` process) owns every run it submits. Before submitting a block
  it claims the block's missing slots in the SQLite database (`Store.claim`: this process, its
  pid and host), so a second client on the same database skips them and says who holds them. It
  stores each run as it arrives, one transaction per run, and releases the claims of runs that
  did not arrive. Workers never open the database.
- A task is one block: every missing arm of it, in the block's random order, on its network
  seed, on one worker, so paired comparisons stay within one machine. It asks for the resource
  `pccstream=1`; workers started with `--nthreads 1 --resources pccstream=1` run one block at a
  time.
- Each finished run goes back at once through a Dask `Queue` (compressed JSON). The client
  publishes the stored slots in a Dask `Variable`; a block that Dask re-runs after its worker was
  lost reads it and skips the runs already stored. A run that still arrives twice is discarded:
  nothing is stored twice (the database's UNIQUE(experiment, block, arm) backs this up).

The runner is a factory (`RunnerFactory`) so the tests drive real Dask scheduling, storage and
resume with a fake run; the CLI uses `browser_runner`, the real one (pccstream.ab.runner).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pccstream.ab.design import Design, schedule
from pccstream.ab.experiment import measure_slot, prepare, run_summary
from pccstream.ab.progress import Progress
from pccstream.ab.runner import Runner, source_digest
from pccstream.ab.store import Store
from pccstream.errors import UserError
from pccstream.harness.cpu import cpu_model

if TYPE_CHECKING:
    from distributed import Client

RESOURCE = "pccstream"
POLL_S = 1.0
RECEIVE_POLL_S = 0.1
WORKERS_REFRESH_S = 10.0


@dataclass(frozen=True)
class BlockJob:
    """What a worker needs to run one block (pickled to the worker)."""

    design_json: str
    block: int
    arms: tuple[str, ...]  # the arms to run, in the block's order
    runs_queue: str  # Dask Queue: finished runs back to the client
    stored_variable: str  # Dask Variable: the slots the client has stored
    runner: RunnerFactory
    media: str | None = None  # paths on the worker
    live_media: str | None = None
    keep_logs: str | None = None
    max_load: float | None = None
    max_load_wait_s: float = 600.0

    @property
    def design(self) -> Design:
        return Design.from_dict(json.loads(self.design_json))


RunnerFactory = Callable[[Design, BlockJob], AbstractAsyncContextManager[Runner]]


@contextlib.asynccontextmanager
async def browser_runner(design: Design, job: BlockJob) -> AsyncIterator[Runner]:
    """The real runner on a worker: media found (or encoded) there, one Chromium per block."""
    from pccstream.ab.cli import find_live_media, find_or_make_media
    from pccstream.ab.runner import BrowserRunner

    if design.mode == "live":
        media = find_live_media(design, job.live_media)
    else:
        media = find_or_make_media(design, job.media)
    runner = BrowserRunner(
        media, keep_logs=Path(job.keep_logs) if job.keep_logs else None,
        live=design.mode == "live",
    )  # fmt: skip
    await runner.start()
    try:
        yield runner
    finally:
        await runner.close()


def worker_identity() -> dict[str, Any]:
    """A worker's host, CPU and code (compared with the client's before the runs)."""
    from pccstream import __version__

    return {
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "pccstream": __version__,
        "source_sha256": source_digest(),
    }


def run_block(job: BlockJob) -> list[str]:
    """The Dask task: run the block's arms in order, each sent back as soon as it is measured;
    returns the arms sent."""
    from dask.context import thread_state  # the task key of the running task
    from distributed import Queue, Variable, get_worker

    design = job.design
    slots = {slot.arm: slot for slot in schedule(design) if slot.block == job.block}
    queue, stored = Queue(job.runs_queue), Variable(job.stored_variable)
    worker = get_worker()
    key = thread_state.key  # this task's, read in the task's own thread

    def dropped() -> bool:
        """The client is gone (killed) and Dask dropped this task: nobody would store more."""
        task = worker.state.tasks.get(key)
        return task is None or task.state in ("cancelled", "released", "forgotten")

    def stored_arms() -> set[str]:
        try:
            value = cast(list[list[Any]], stored.get(timeout=10))
        except TimeoutError:
            return set()
        return {arm for block, arm in value if block == job.block}

    async def main() -> list[str]:
        sent: list[str] = []
        async with job.runner(design, job) as runner:
            for arm in job.arms:
                if dropped():
                    break
                # Blocking Dask calls leave this thread's event loop to a helper thread.
                if arm in await asyncio.to_thread(stored_arms):
                    continue  # stored from an earlier attempt of this block (a lost worker)
                record = await measure_slot(
                    design, slots[arm], runner, job.max_load, job.max_load_wait_s
                )
                record.setdefault("config", {})["worker"] = worker.address
                payload = zlib.compress(json.dumps(record).encode(), 6)
                message = {"block": job.block, "arm": arm, "record_z": payload}
                await asyncio.to_thread(queue.put, message)
                sent.append(arm)
        return sent

    return asyncio.run(main())


@dataclass
class ClusterOutcome:
    experiment_id: str
    total: int
    skipped: int
    ran: int = 0
    wall_s: float = 0.0
    overheads_s: list[float] = field(default_factory=list)
    claimed_elsewhere: int = 0
    duplicates: int = 0
    failures: list[str] = field(default_factory=list)
    hosts: dict[str, int] = field(default_factory=dict)


@contextlib.contextmanager
def connect(address: str) -> Iterator[Client]:
    """A client of `tcp://HOST:PORT` (a running scheduler) or `local:N` (a LocalCluster of N
    one-thread workers with the resource, in this process's lifetime)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UserError(
            "--cluster needs Dask distributed: pip install 'pccstream[cluster]'"
        ) from None
    if address.startswith("local:"):
        try:
            workers = int(address.removeprefix("local:"))
        except ValueError:
            workers = 0
        if workers < 1:
            raise UserError(f"--cluster {address!r}: expected local:N with N >= 1 workers")
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True,
            resources={RESOURCE: 1},
            # None turns the dashboard off (documented; the stubs say str only).
            dashboard_address=None,  # pyright: ignore[reportArgumentType]
        )  # fmt: skip
        try:
            with Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    if "://" not in address:
        raise UserError(
            f"--cluster {address!r}: expected a scheduler address tcp://HOST:8786 or local:N"
        )
    try:
        client = Client(address, timeout="30s")
    except (OSError, TimeoutError) as exc:
        raise UserError(f"--cluster {address}: cannot reach the scheduler: {exc}") from None
    with client:
        yield client


def _workers_with_resource(client: Client) -> int:
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    return sum(1 for w in workers.values() if (w.get("resources") or {}).get(RESOURCE))


def _check_workers(client: Client, progress: Progress) -> None:
    """Say which machines will run the blocks, and warn about code that differs from ours."""
    identities = cast(dict[str, dict[str, Any]], client.run(worker_identity))
    ours = source_digest()
    hosts: dict[str, int] = {}
    for identity in identities.values():
        hosts[identity["host"]] = hosts.get(identity["host"], 0) + 1
    text = ", ".join(f"{host} x{n}" for host, n in sorted(hosts.items())) or "none yet"
    progress.note(f"workers: {text} ({_workers_with_resource(client)} with {RESOURCE}=1)")
    stale = sorted({i["host"] for i in identities.values() if i["source_sha256"] != ours})
    if stale:
        progress.note(
            f"warning: workers on {', '.join(stale)} run other pccstream sources than this "
            "client (the report shows each run's source version)"
        )
    if not _workers_with_resource(client):
        progress.note(
            f"waiting for workers started with --resources {RESOURCE}=1 "
            "(dask worker tcp://SCHEDULER:8786 --nthreads 1 --resources pccstream=1)"
        )


def run_on_cluster(
    store: Store,
    design: Design,
    client: Client,
    *,
    resume: bool = False,
    command: str | None = None,
    runner: RunnerFactory = browser_runner,
    media: str | None = None,
    live_media: str | None = None,
    keep_logs: str | None = None,
    max_load: float | None = None,
    max_load_wait_s: float = 600.0,
    progress: Progress | None = None,
    expected_overhead_s: float = 6.0,
) -> ClusterOutcome:
    """Run the experiment's missing slots on the cluster behind `client`, storing each run as
    it arrives. See the module docstring for who owns what."""
    from distributed import Queue, Variable, as_completed

    started = time.monotonic()
    prepare(store, design, resume=resume, command=command)
    experiment = design.experiment_id
    slots = schedule(design)
    done = store.completed(experiment)
    todo = [slot for slot in slots if (slot.block, slot.arm) not in done]
    outcome = ClusterOutcome(experiment, len(slots), len(slots) - len(todo))
    if progress is None:
        progress = Progress(
            len(slots), len(slots) - len(todo), design.duration_s + expected_overhead_s
        )
    tag = f"pccstream-{experiment}-{store.owner[:12]}"
    queue, stored = Queue(f"{tag}-runs", client=client), Variable(f"{tag}-stored", client=client)
    claimed: dict[int, list[str]] = {}
    try:
        for slot in todo:
            refusal = store.claim(experiment, slot.block, slot.arm)
            if refusal is not None:
                progress.skip_run(f"block {slot.block + 1}/{design.runs} {slot.arm}", refusal)
                outcome.claimed_elsewhere += 1
                continue
            claimed.setdefault(slot.block, []).append(slot.arm)
        owned = sum(len(arms) for arms in claimed.values())
        progress.note(
            f"process {os.getpid()} on {socket.gethostname()} owns {owned} runs of experiment "
            f"{experiment} ({len(claimed)} blocks), runs them on {_describe(client)} and "
            f"stores them in {store.path}"
        )
        if not claimed:
            return _finish(outcome, progress, started)
        _check_workers(client, progress)
        stored.set(sorted([block, arm] for block, arm in done))
        futures = {
            client.submit(
                run_block,
                BlockJob(
                    design_json=design.canonical_json(), block=block, arms=tuple(arms),
                    runs_queue=queue.name, stored_variable=stored.name, runner=runner,
                    media=media, live_media=live_media, keep_logs=keep_logs,
                    max_load=max_load, max_load_wait_s=max_load_wait_s,
                ),  # fmt: skip
                key=f"{tag}-block-{block}",
                resources={RESOURCE: 1},
            ): block
            for block, arms in sorted(claimed.items())
        }
        progress.parallel = max(1, _workers_with_resource(client))
        pending = as_completed(list(futures))
        refreshed = time.monotonic()
        while True:
            _receive(store, design, queue, stored, done, progress, outcome, wait_s=POLL_S)
            for future in pending.next_batch(block=False) if pending.has_ready() else []:
                block = futures[future]
                if future.status != "finished":
                    try:
                        error: BaseException | None = future.exception()
                    except (Exception, asyncio.CancelledError) as exc:  # cancelled: it raises
                        error = exc
                    outcome.failures.append(f"block {block + 1}: {error}")
                    progress.note(f"block {block + 1}/{design.runs} failed: {error}")
            if pending.is_empty():
                break
            if time.monotonic() - refreshed > WORKERS_REFRESH_S:
                progress.parallel = max(1, _workers_with_resource(client))
                refreshed = time.monotonic()
            running = pending.count()
            progress.set_label(f"{running} block(s) queued or running")
            progress.tick()
        # Every task has finished: what it sent is at the scheduler; take the rest.
        _receive(store, design, queue, stored, done, progress, outcome, wait_s=0.0)
    finally:
        for block, arms in claimed.items():
            for arm in arms:
                store.release(experiment, block, arm)  # no-op for the stored ones
        with contextlib.suppress(Exception):
            stored.delete()
    return _finish(outcome, progress, started)


def _describe(client: Client) -> str:
    address = client.scheduler.address if client.scheduler is not None else "?"
    return f"the Dask scheduler {address}"


def _receive(
    store: Store,
    design: Design,
    queue: Any,
    stored: Any,
    done: set[tuple[int, str]],
    progress: Progress,
    outcome: ClusterOutcome,
    *,
    wait_s: float,
) -> None:
    """Store the runs that have arrived, waiting up to `wait_s` for some. (A batch get returns
    at once; a get with a timeout would log the timeout as an error on the scheduler.)"""
    deadline = time.monotonic() + wait_s
    while True:
        messages = queue.get(batch=True)
        for message in messages:
            _store_run(store, design, message, stored, done, progress, outcome)
        if messages or time.monotonic() >= deadline:
            return
        time.sleep(RECEIVE_POLL_S)


def _store_run(
    store: Store,
    design: Design,
    message: dict[str, Any],
    stored: Any,
    done: set[tuple[int, str]],
    progress: Progress,
    outcome: ClusterOutcome,
) -> None:
    key = (int(message["block"]), str(message["arm"]))
    label = f"block {key[0] + 1}/{design.runs} {key[1]}"
    if key in done:
        outcome.duplicates += 1
        progress.note(f"  {label}: arrived again (a re-run block), discarded")
        return
    record = json.loads(zlib.decompress(message["record_z"]))
    store.commit_run(design.experiment_id, record)
    done.add(key)
    stored.set(sorted([block, arm] for block, arm in done))
    outcome.ran += 1
    outcome.overheads_s.append(record.get("overhead_s") or 0.0)
    host = record.get("worker_host") or "?"
    outcome.hosts[host] = outcome.hosts.get(host, 0) + 1
    progress.run_arrived(f"{label} on {host}", run_summary(record), record.get("wall_s") or 0.0)


def _finish(outcome: ClusterOutcome, progress: Progress, started: float) -> ClusterOutcome:
    progress.close()
    outcome.wall_s = time.monotonic() - started
    return outcome


def print_outcome(outcome: ClusterOutcome, db: str) -> int:
    """The closing line of `pccstream ab --cluster`; exit status 1 when a block failed."""
    overheads = outcome.overheads_s
    overhead = (
        f", mean per-run overhead {sum(overheads) / len(overheads):.1f} s" if overheads else ""
    )
    elsewhere = (
        f", {outcome.claimed_elsewhere} left to another process"
        if outcome.claimed_elsewhere
        else ""
    )
    hosts = ", ".join(f"{host} {n}" for host, n in sorted(outcome.hosts.items()))
    print(
        f"experiment {outcome.experiment_id}: {outcome.ran} runs in {outcome.wall_s:.0f} s "
        f"on the cluster ({hosts or 'no runs'}; {outcome.skipped} already stored{elsewhere})"
        f"{overhead}; results in {db}"
    )
    if outcome.failures:
        for failure in outcome.failures:
            print(f"pccstream: failed: {failure}", file=sys.stderr)
        print(
            "pccstream: completed runs are stored; fix the cause and pass --resume",
            file=sys.stderr,
        )
        return 1
    return 0

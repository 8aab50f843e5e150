"""`pccstream ab --cluster` on a Dask LocalCluster of 2 workers: a 2 block x 2 arm x 5 s
experiment.

Real: Dask distributed (scheduler, two workers offering the resource pccstream=1, one task per
block asking for it, the runs coming back through a Dask Queue), the client's claims and its
SQLite storage of each run as it arrives, killing the client with SIGKILL and resuming on
another cluster. Faked: the run itself (tests.ab.fakes.PlayingRunner sleeps the design's 5 s
and returns a deterministic record instead of driving Chromium, a server and an emulator), so
the test stays light on a 2-core machine; the browser path is tests/ab/test_smoke_ab.py's.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

# The `cluster` extra (Dask distributed): the bootstrap installs it; never skipped.
from distributed import Client, LocalCluster

from pccstream.ab.cluster import connect, run_on_cluster
from pccstream.ab.design import Design, schedule
from pccstream.ab.progress import Progress
from pccstream.ab.store import Store
from pccstream.harness.cpu import cpu_model
from tests.checkout import REPO_ROOT

from .fakes import dying_runner, playing_runner

DESIGN = Design(
    arms=("vivace", "cubic"),
    scenario="video-rttflap",
    runs=2,
    seed=3,
    duration_s=5.0,
    bitrate_kbps=3000,
)
SERVER_DIR = REPO_ROOT / "server"


def quiet() -> tuple[Progress, io.StringIO]:
    stream = io.StringIO()
    return Progress(len(schedule(DESIGN)), 0, 5.0, stream=stream), stream


def in_process_cluster(workers: int = 2) -> LocalCluster:
    return LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=False,
        resources={"pccstream": 1}, dashboard_address=None,  # pyright: ignore[reportArgumentType]
    )  # fmt: skip


def assert_complete_and_intact(store: Store) -> list:
    runs = store.runs(DESIGN.experiment_id)
    stored = [(r["block"], r["arm"]) for r in runs]
    assert sorted(stored) == sorted((s.block, s.arm) for s in schedule(DESIGN))
    assert len(stored) == len(set(stored)) == 4  # every run once
    for slot in schedule(DESIGN):
        (run,) = [r for r in runs if (r["block"], r["arm"]) == (slot.block, slot.arm)]
        # Blocks intact: the block's network seed, its position in the block's random order.
        assert (run["network_seed"], run["position"]) == (slot.network_seed, slot.position)
        assert (run["worker_host"], run["cpu_model"]) == (socket.gethostname(), cpu_model())
    return runs


def test_each_block_is_one_task_on_one_worker_and_every_run_is_stored_once(tmp_path: Path):
    progress, log = quiet()
    with in_process_cluster() as cluster, Client(cluster) as client:
        with Store(tmp_path / "r.sqlite") as store:
            outcome = run_on_cluster(
                store, DESIGN, client, runner=playing_runner, progress=progress
            )
            assert (outcome.ran, outcome.duplicates, outcome.failures) == (4, 0, [])
            runs = assert_complete_and_intact(store)
            assert store.conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    workers = {}
    for run in runs:
        workers.setdefault(run["block"], set()).add(json.loads(run["config_json"])["worker"])
    assert all(len(w) == 1 for w in workers.values())  # a block's arms on one worker
    # The two blocks ran at the same time, one per worker (resource pccstream=1 each).
    assert workers[0] != workers[1]
    spans = {b: [(r["started_at"], r["finished_at"]) for r in runs if r["block"] == b]
             for b in (0, 1)}  # fmt: skip
    assert min(s for s, _ in spans[1]) < max(f for _, f in spans[0])
    text = log.getvalue()
    assert f"process {os.getpid()}" in text and "owns 4 runs" in text
    assert "4/4 runs done" in text


def test_resume_after_killing_the_client_stores_every_run_once(tmp_path: Path):
    """The client (with its local:2 cluster) is killed after the first runs are stored; a
    resume on another cluster runs only what is missing."""
    db = tmp_path / "r.sqlite"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(SERVER_DIR)!r})
        from tests.ab.fakes import playing_runner
        from tests.ab.test_cluster import DESIGN
        from pccstream.ab.cluster import connect, run_on_cluster
        from pccstream.ab.store import Store

        if __name__ == "__main__":
            with Store({str(db)!r}) as store, connect("local:2") as client:
                run_on_cluster(store, DESIGN, client, runner=playing_runner)
        """
    )
    (tmp_path / "client.py").write_text(script)
    child = subprocess.Popen(
        [sys.executable, str(tmp_path / "client.py")], cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    first: list = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            if db.exists():
                with Store(db) as store:
                    first = [(r["block"], r["arm"]) for r in store.runs()]
                if first:
                    break
            time.sleep(0.2)
        assert first, f"no run stored: {child.stderr.read() if child.poll() is not None else ''}"
        os.killpg(child.pid, signal.SIGKILL)  # the client and its local workers
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    with Store(db) as store:
        assert 1 <= len(store.runs()) < 4
        claims = store.conn.execute("SELECT pid FROM claims").fetchall()
        assert claims and all(row["pid"] == child.pid for row in claims)  # a dead owner's
        before = {(r["block"], r["arm"]): r["id"] for r in store.runs()}
        progress, log = quiet()
        with in_process_cluster(workers=1) as cluster, Client(cluster) as client:
            outcome = run_on_cluster(
                store, DESIGN, client, resume=True, runner=playing_runner, progress=progress
            )
        assert outcome.skipped == len(before) and outcome.ran == 4 - len(before)
        runs = assert_complete_and_intact(store)
        assert all(
            r["id"] == before[(r["block"], r["arm"])]
            for r in runs
            if (r["block"], r["arm"]) in before
        )  # stored runs untouched
    # Nothing of the killed client's cluster is left running.
    assert subprocess.run(["pgrep", "-g", str(child.pid)], capture_output=True).returncode == 1


def test_a_lost_workers_block_is_rerun_and_nothing_is_stored_twice(tmp_path: Path, monkeypatch):
    """A worker process dies in the middle of block 1 (after its first run was sent); Dask runs
    the block again on a worker, which skips the run already stored."""
    marker = tmp_path / "died"
    monkeypatch.setenv("PCCSTREAM_TEST_DIE_ONCE", str(marker))  # the spawned workers inherit it
    monkeypatch.syspath_prepend(str(SERVER_DIR))  # so they import tests.ab.fakes
    progress, log = quiet()
    with Store(tmp_path / "r.sqlite") as store, connect("local:2") as client:
        outcome = run_on_cluster(store, DESIGN, client, runner=dying_runner, progress=progress)
        runs = assert_complete_and_intact(store)
    assert marker.is_file(), "the worker did not die"
    assert outcome.failures == [] and outcome.ran == 4 and outcome.duplicates in (0, 1)
    block0 = [json.loads(r["config_json"])["worker"] for r in runs if r["block"] == 0]
    assert len(block0) == 2  # its first run from the lost worker, its second from the re-run
    assert "4/4 runs done" in log.getvalue()


def test_a_bad_cluster_address_is_one_clear_line():
    from pccstream.errors import UserError

    with pytest.raises(UserError, match="local:N"):
        with connect("local:zero"):
            pass
    with pytest.raises(UserError, match="tcp://HOST:8786"):
        with connect("example:8786"):
            pass

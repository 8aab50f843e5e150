import asyncio
import csv
import io
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from pccstream.ab.design import Design, Slot, schedule
from pccstream.ab.experiment import run_experiment, wait_for_load
from pccstream.ab.export import export_runs
from pccstream.ab.progress import Progress
from pccstream.ab.runner import RunFailed
from pccstream.ab.store import Store, open_store, telemetry
from pccstream.errors import RunError, UserError
from tests.checkout import REPO_ROOT

from .fakes import FakeRunner, fake_record

DESIGN = Design(
    arms=("vivace", "cubic", "reno"),
    scenario="video-rttflap",
    runs=4,
    seed=9,
    duration_s=10.0,
    bitrate_kbps=3000,
)


def quiet(design: Design = DESIGN) -> Progress:
    return Progress(len(schedule(design)), 0, 1.0, stream=io.StringIO())


def run(store: Store, runner, **kw):
    return asyncio.run(run_experiment(store, DESIGN, runner, progress=quiet(), **kw))


def rows(store: Store) -> list[tuple]:
    return [(r["id"], r["block"], r["arm"], r["finished_at"]) for r in store.runs()]


def test_a_full_experiment_stores_every_slot_once(tmp_path: Path):
    with Store(tmp_path / "r.sqlite") as store:
        outcome = run(store, FakeRunner())
        assert (outcome.total, outcome.ran, outcome.skipped) == (12, 12, 0)
        stored = store.runs(DESIGN.experiment_id)
        assert [(r["block"], r["arm"]) for r in stored] == [
            (s.block, s.arm) for s in schedule(DESIGN)
        ]
        first = stored[0]
        assert first["overhead_s"] == 0.5 and first["wall_s"] >= 0
        assert telemetry(first)[0][0]["type"] == "hello"
        assert store.design(DESIGN.experiment_id) == DESIGN


def test_resume_after_a_crash_loses_nothing_and_duplicates_nothing(tmp_path: Path):
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        crashing = FakeRunner(crash_after=5)
        with pytest.raises(RuntimeError, match="simulated crash"):
            run(store, crashing)
        before = rows(store)
        assert len(before) == 5  # the crashed run left no row
    with Store(db) as store:  # a new process would reopen the file
        with pytest.raises(UserError, match="--resume"):
            run(store, FakeRunner())  # not without --resume
        resumed = FakeRunner()
        outcome = run(store, resumed, resume=True)
        assert (outcome.skipped, outcome.ran) == (5, 7)
        after = rows(store)
        assert after[:5] == before  # completed runs untouched
        assert len(after) == 12
        assert len({(b, a) for _, b, a, _ in after}) == 12  # no duplicate
        done_first = {(b, a) for _, b, a, _ in before}
        assert not done_first & set(resumed.ran)  # nothing redone
        # Resuming a complete experiment runs nothing.
        assert run(store, FakeRunner(), resume=True).ran == 0


def test_resume_with_more_runs_adopts_the_stored_blocks_and_runs_only_the_new_ones(
    tmp_path: Path,
):
    longer = replace(DESIGN, runs=6)
    other_seed = replace(DESIGN, runs=6, seed=10)
    with Store(tmp_path / "r.sqlite") as store:
        run(store, FakeRunner())
        before = rows(store)
        extending = FakeRunner()
        outcome = asyncio.run(
            run_experiment(store, longer, extending, progress=quiet(longer), resume=True)
        )
        assert (outcome.total, outcome.skipped, outcome.ran) == (18, 12, 6)
        assert sorted(extending.ran) == sorted((s.block, s.arm) for s in schedule(longer)[12:])
        # the adopted rows are the stored runs, slot for slot; the original experiment keeps its own
        short_runs = store.runs(DESIGN.experiment_id)
        long_runs = store.runs(longer.experiment_id)
        assert [(r["id"], r["block"], r["arm"], r["finished_at"]) for r in short_runs] == before
        assert [(r["slot"], r["block"], r["arm"], r["network_seed"], r["finished_at"])
                for r in long_runs[:12]] == [
            (r["slot"], r["block"], r["arm"], r["network_seed"], r["finished_at"])
            for r in short_runs
        ]
        assert [(s.block, s.arm, s.network_seed) for s in schedule(longer)] == [
            (r["block"], r["arm"], r["network_seed"]) for r in long_runs
        ]
        # resuming again adopts nothing twice; another seed's design adopts nothing
        assert asyncio.run(
            run_experiment(store, longer, FakeRunner(), progress=quiet(longer), resume=True)
        ).ran == 0
        assert len(store.runs(longer.experiment_id)) == 18
        fresh = FakeRunner()
        asyncio.run(
            run_experiment(store, other_seed, fresh, progress=quiet(other_seed), resume=True)
        )
        assert len(fresh.ran) == 18


def test_without_resume_a_longer_design_adopts_nothing(tmp_path: Path):
    longer = replace(DESIGN, runs=6)
    with Store(tmp_path / "r.sqlite") as store:
        run(store, FakeRunner())
        runner = FakeRunner()
        asyncio.run(run_experiment(store, longer, runner, progress=quiet(longer)))
        assert len(runner.ran) == 18


def test_a_duplicate_commit_is_refused(tmp_path: Path):
    with Store(tmp_path / "r.sqlite") as store:
        store.add_experiment(DESIGN)
        slot = schedule(DESIGN)[0]
        record = {
            **fake_record(DESIGN, slot),
            "slot": 0,
            "block": slot.block,
            "position": 0,
            "arm": slot.arm,
            "network_seed": 1,
            "started_at": 0.0,
            "finished_at": 1.0,
            "wall_s": 1.0,
        }
        store.commit_run(DESIGN.experiment_id, record)
        with pytest.raises(UserError, match="already stored"):
            store.commit_run(DESIGN.experiment_id, record)
        assert len(store.runs()) == 1


def test_a_run_that_measured_nothing_is_retried_once(tmp_path: Path):
    class Flaky(FakeRunner):
        def __init__(self, failures: int) -> None:
            super().__init__()
            self.failures = failures

        async def run(self, design, slot):
            if self.failures:
                self.failures -= 1
                raise RunFailed("no viewer got media")
            return await super().run(design, slot)

    with Store(tmp_path / "a.sqlite") as store:
        assert run(store, Flaky(1)).ran == 12
    with Store(tmp_path / "b.sqlite") as store:
        with pytest.raises(RunError, match="failed twice"):
            run(store, Flaky(2))
        assert store.runs() == []


def test_export_csv_and_parquet(tmp_path: Path):
    with Store(tmp_path / "r.sqlite") as store:
        run(store, FakeRunner())
        assert export_runs(store, "csv", tmp_path / "r.csv") == (12, 0)
        table = list(csv.DictReader((tmp_path / "r.csv").open()))
        assert len(table) == 12
        assert {"arm", "block", "buffering_ratio", "design_scenario", "p95_queue_delay_ms"} <= set(
            table[0]
        )
        assert {"dropped_frames", "decoded_frames", "event_loop_lag_p95_ms",
                "buffering_ratio_with_startup", "browser_cpu_s", "emulator_cpu_s",
                "server_cpu_s", "cpu_window_s", "loadavg_start", "host_cpus",
                "cpu_starved", "cpu_starved_reason"} <= set(table[0])  # fmt: skip
        assert export_runs(store, "parquet", tmp_path / "r.parquet") == (12, 0)
        import pyarrow.parquet as pq

        assert pq.read_table(tmp_path / "r.parquet").num_rows == 12


def test_a_killed_process_leaves_only_complete_runs(tmp_path: Path):
    """SIGKILL in the middle of a run: the stored runs are whole, resume completes the rest."""
    db = tmp_path / "r.sqlite"
    script = textwrap.dedent(
        f"""
        import asyncio, io, sys
        sys.path.insert(0, {str(REPO_ROOT / "server")!r})
        from tests.ab.fakes import FakeRunner
        from tests.ab.test_store_resume import DESIGN, quiet
        from pccstream.ab.experiment import run_experiment
        from pccstream.ab.store import Store

        class Slow(FakeRunner):
            async def run(self, design, slot):
                await asyncio.sleep(0.15)
                return await super().run(design, slot)

        with Store({str(db)!r}) as store:
            asyncio.run(run_experiment(store, DESIGN, Slow(), progress=quiet(), resume=True))
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            if db.exists():
                with Store(db) as store:
                    if len(store.runs()) >= 3:
                        break
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    with Store(db) as store:
        stored = rows(store)
        assert 3 <= len(stored) < 12
        outcome = run(store, FakeRunner(), resume=True)
        after = rows(store)
        assert after[: len(stored)] == stored
        assert len(after) == 12 == len({(b, a) for _, b, a, _ in after})
        assert outcome.ran == 12 - len(stored)


def test_max_load_waits_before_each_run_and_records_the_wait(tmp_path: Path):
    loads = iter([5.0, 3.0, 1.0] + [0.5] * 100)
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    with Store(tmp_path / "r.sqlite") as store:
        asyncio.run(
            run_experiment(
                store, DESIGN, FakeRunner(), progress=quiet(), max_load=2.0,
                loadavg=lambda: (next(loads), 0.0, 0.0), sleep=fake_sleep,
            )
        )  # fmt: skip
        configs = [json.loads(r["config_json"]) for r in store.runs()]
    assert slept == [5.0, 5.0]
    assert configs[0]["load_wait_s"] == 10.0 and configs[0]["max_load"] == 2.0
    assert all(c["load_wait_s"] == 0.0 for c in configs[1:])


def test_wait_for_load_gives_up_after_the_limit():
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    waited = asyncio.run(
        wait_for_load(1.0, 12.0, loadavg=lambda: (9.0, 9.0, 9.0), sleep=fake_sleep)
    )
    assert waited == 12.0 and slept == [5.0, 5.0, 2.0]


def test_a_database_from_before_the_latency_columns_gains_them(tmp_path):
    path = tmp_path / "old.sqlite"
    with Store(path) as store:
        for name in ("latency_p50_ms", "latency_p95_ms", "frames_skipped"):
            store.conn.execute(f"ALTER TABLE runs DROP COLUMN {name}")
        store.conn.commit()
    with Store(path) as store:
        columns = {row["name"] for row in store.conn.execute("PRAGMA table_info(runs)")}
    assert {"latency_p50_ms", "latency_p95_ms", "frames_skipped"} <= columns


def test_a_read_only_store_leaves_an_old_database_as_it_was(tmp_path):
    path = tmp_path / "old.sqlite"
    with Store(path) as store:
        run(store, FakeRunner())
        store.conn.execute("ALTER TABLE runs DROP COLUMN emulator_late_share")
        store.conn.commit()
        store.conn.execute("PRAGMA journal_mode=DELETE")
    before = path.read_bytes()
    with open_store(path, read_only=True) as store:
        stored = store.runs()
        assert len(stored) == 12 and all(r["emulator_late_share"] is None for r in stored)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.sqlite"]
    with pytest.raises(UserError, match="no such results database"):
        with open_store(tmp_path / "missing.sqlite", read_only=True):
            pass


def test_a_read_only_store_leaves_no_wal_files_beside_a_closed_database(tmp_path):
    path = tmp_path / "results.sqlite"
    with Store(path) as store:
        run(store, FakeRunner())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.sqlite"]
    with open_store(path, read_only=True) as store:
        assert len(store.runs()) == 12
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.sqlite"]


def test_a_read_only_store_sees_what_a_connected_writer_committed(tmp_path):
    path = tmp_path / "results.sqlite"
    with Store(path) as writer:
        run(writer, FakeRunner())
        assert (tmp_path / "results.sqlite-wal").exists()
        with open_store(path, read_only=True) as store:
            assert len(store.runs()) == 12


def test_a_database_from_before_the_cpu_health_columns_gains_them(tmp_path):
    new = ("dropped_frames", "decoded_frames", "event_loop_lag_p95_ms", "event_loop_lag_max_ms",
           "buffering_ratio_with_startup", "browser_cpu_s", "emulator_cpu_s", "cpu_window_s",
           "loadavg_start", "host_cpus", "cpu_starved", "cpu_starved_reason")  # fmt: skip
    path = tmp_path / "old.sqlite"
    with Store(path) as store:
        run(store, FakeRunner())
        for name in new:
            store.conn.execute(f"ALTER TABLE runs DROP COLUMN {name}")
        store.conn.commit()
    with Store(path) as store:
        stored = store.runs()
        assert len(stored) == 12 and all(r["cpu_starved"] is None for r in stored)
        assert set(new) <= set(stored[0].keys())


def test_each_run_is_flagged_by_the_starvation_rule(tmp_path: Path):
    class Starving(FakeRunner):
        async def run(self, design, slot):
            record = await super().run(design, slot)
            record.update(dropped_frames=30.0 if slot.arm == "cubic" else 1.0,
                          decoded_frames=300.0, event_loop_lag_p95_ms=8.0)  # fmt: skip
            return record

    stream = io.StringIO()
    progress = Progress(len(schedule(DESIGN)), 0, 1.0, stream=stream)
    with Store(tmp_path / "r.sqlite") as store:
        asyncio.run(run_experiment(store, DESIGN, Starving(), progress=progress))
        flags = {(r["arm"], r["cpu_starved"], r["cpu_starved_reason"]) for r in store.runs()}
    assert flags == {
        ("cubic", 1, "dropped 10.0 % of frames"),
        ("vivace", 0, None),
        ("reno", 0, None),
    }
    lines = stream.getvalue().splitlines()
    cubic = [line for line in lines if " cubic: " in line]
    assert len(cubic) == 4
    assert all("dropped 30/300 frames CPU-STARVED (dropped 10.0 % of frames)" in x for x in cubic)
    vivace = next(line for line in lines if " vivace: " in line)
    assert "dropped 1/300 frames" in vivace and "CPU-STARVED" not in vivace


class _YieldingRunner(FakeRunner):
    """A fake run that gives the event loop away, so two experiment loops interleave."""

    async def run(self, design: Design, slot: Slot) -> dict:
        await asyncio.sleep(0.001)
        return await super().run(design, slot)


def test_two_resumes_on_one_database_never_run_the_same_slot(tmp_path: Path):
    first_runner, second_runner = _YieldingRunner(), _YieldingRunner()
    first_log, second_log = io.StringIO(), io.StringIO()

    async def both() -> list:
        with Store(tmp_path / "r.sqlite") as first, Store(tmp_path / "r.sqlite") as second:
            return await asyncio.gather(
                run_experiment(first, DESIGN, first_runner, resume=True,
                               progress=Progress(12, 0, 1.0, stream=first_log)),
                run_experiment(second, DESIGN, second_runner, resume=True,
                               progress=Progress(12, 0, 1.0, stream=second_log)),
            )

    outcomes = asyncio.run(both())
    ran = first_runner.ran + second_runner.ran
    assert sorted(ran) == sorted({(slot.block, slot.arm) for slot in schedule(DESIGN)})
    assert sum(o.ran for o in outcomes) == 12 and sum(o.claimed_elsewhere for o in outcomes) > 0
    logs = first_log.getvalue() + second_log.getvalue()
    assert f"skipped, claimed by process {os.getpid()}" in logs
    with Store(tmp_path / "r.sqlite") as store:
        assert len(store.runs(DESIGN.experiment_id)) == 12


def test_a_claim_whose_process_is_gone_is_taken_over(tmp_path: Path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    with Store(tmp_path / "r.sqlite") as killed, Store(tmp_path / "r.sqlite") as resumed:
        killed.add_experiment(DESIGN)
        assert killed.claim(DESIGN.experiment_id, 0, "cubic") is None
        assert resumed.claim(DESIGN.experiment_id, 0, "cubic") == (
            f"claimed by process {os.getpid()} on {socket.gethostname()}"
        )
        killed.conn.execute("UPDATE claims SET pid = ?", (gone.pid,))
        killed.conn.commit()
        assert resumed.claim(DESIGN.experiment_id, 0, "cubic") is None


def test_a_database_from_before_the_host_columns_gains_them(tmp_path):
    path = tmp_path / "old.sqlite"
    with Store(path) as store:
        run(store, FakeRunner())
        for name in ("worker_host", "cpu_model"):
            store.conn.execute(f"ALTER TABLE runs DROP COLUMN {name}")
        store.conn.commit()
    with Store(path) as store:
        stored = store.runs()
        assert len(stored) == 12 and all(r["worker_host"] is None for r in stored)
        outcome = run(store, FakeRunner(), resume=True)  # old runs kept, nothing to run
        assert outcome.ran == 0


def test_each_run_records_the_host_it_ran_on(tmp_path):
    with Store(tmp_path / "r.sqlite") as store:
        run(store, FakeRunner())
        hosts = {(r["worker_host"], r["cpu_model"]) for r in store.runs()}
    from pccstream.harness.cpu import cpu_model

    assert hosts == {(socket.gethostname(), cpu_model())}

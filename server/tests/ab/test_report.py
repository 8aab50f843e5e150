import asyncio
import io
import re
from pathlib import Path

import pytest

from pccstream.ab import stats
from pccstream.ab.design import Design, schedule
from pccstream.ab.experiment import run_experiment
from pccstream.ab.progress import Progress
from pccstream.ab.report import (
    LATE_SEGMENT_REQUESTS,
    SLOW_START_EXIT,
    ExperimentView,
    markdown_tables,
    paired_table,
    render,
    summary_table,
    write_report,
)
from pccstream.ab.store import Store
from pccstream.errors import UserError

from .fakes import FakeRunner

DESIGN = Design(
    arms=("vivace", "cubic", "reno"),
    scenario="video-rttflap",
    runs=4,
    seed=2,
    duration_s=10.0,
    bitrate_kbps=3000,
)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    path = tmp_path_factory.mktemp("report") / "r.sqlite"
    store = Store(path)
    progress = Progress(len(schedule(DESIGN)), 0, 1.0, stream=io.StringIO())
    asyncio.run(run_experiment(store, DESIGN, FakeRunner(), progress=progress))
    # A second, partial experiment (another scenario) in the same database.
    other = Design(
        arms=("vivace", "cubic"),
        scenario="video-3viewers",
        runs=2,
        viewers=3,
        bitrate_kbps=1500,
        duration_s=10.0,
    )
    progress = Progress(len(schedule(other)), 0, 1.0, stream=io.StringIO())
    with pytest.raises(RuntimeError):
        asyncio.run(run_experiment(store, other, FakeRunner(crash_after=3), progress=progress))
    return store


@pytest.fixture(scope="module")
def page(store: Store) -> str:
    return render(store, title="test report", resamples=500)


def test_report_is_self_contained(page: str):
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", page)
    assert "<link" not in page.lower()


def test_report_has_one_section_per_experiment_with_figures(page: str):
    assert "video-rttflap @ 3000 kbit/s" in page
    assert "video-3viewers" in page and "x3 viewers" in page
    assert "incomplete: 3" in page
    # Figures: per experiment CDFs + scatter + one time series per arm with runs.
    assert page.count("<svg") == (2 + 3) + (2 + 2)
    assert "1-σ ellipses" in page
    assert "stall" in page
    for heading in (
        "Mean per arm",
        "Paired differences against vivace",
        "CDFs over runs",
        "Throughput vs delay",
        "Example time series",
    ):
        assert heading in page


def test_report_tables_hold_the_bootstrap_estimates(store: Store, page: str):
    runs = [r for r in store.runs(DESIGN.experiment_id) if r["arm"] == "cubic"]
    expected = stats.bootstrap_ci([r["buffering_ratio"] for r in runs], resamples=500)
    assert expected.format(100.0) in page
    for header in (
        "buffering ratio (%)",
        "startup delay (ms)",
        "mean bitrate (kbit/s)",
        "throughput (Mbit/s)",
        "p95 queueing delay (ms)",
    ):
        assert header in page


def test_paired_table_finds_the_known_effect(store: Store):
    view = ExperimentView(store, store.experiment(DESIGN.experiment_id))  # type: ignore[arg-type]
    header, rows = paired_table(view, seed=1, resamples=500)
    row = next(r for r in rows if r[0].startswith("buffering ratio") and r[1] == "cubic")
    assert row[2] == "4"
    # The fake's vivace buffers ~0.02, cubic ~0.20: vivace / cubic − 1 ≈ −90 %.
    backward = float(row[5].split()[0])
    assert -93 < backward < -87
    assert float(row[4].split()[0]) > 800  # cubic / vivace − 1 ≈ +900 %


def test_paired_table_takes_any_arm_as_the_baseline(store: Store):
    view = ExperimentView(store, store.experiment(DESIGN.experiment_id))  # type: ignore[arg-type]
    header, rows = paired_table(view, seed=1, resamples=500, baseline="cubic")
    assert header[3] == "arm − cubic [95 % CI]"
    assert {r[1] for r in rows} == {"vivace", "reno"}
    row = next(r for r in rows if r[0].startswith("buffering ratio") and r[1] == "vivace")
    assert -93 < float(row[4].split()[0]) < -87  # vivace / cubic − 1
    tables = markdown_tables(store, resamples=200, baseline="cubic")
    assert "Paired by block against cubic" in tables


def test_a_baseline_that_is_not_an_arm_is_one_clear_error(store: Store):
    # reno is an arm of the first experiment only.
    expected = r"--baseline reno: not an arm of experiment \w+ .*vivace, cubic"
    with pytest.raises(UserError, match=expected):
        markdown_tables(store, resamples=200, baseline="reno")


def test_write_report(store: Store, tmp_path: Path):
    out = tmp_path / "sub" / "report.html"
    write_report(store, out, title="t", resamples=200)
    assert out.stat().st_size > 10_000


def test_empty_database(tmp_path: Path):
    with Store(tmp_path / "empty.sqlite") as empty:
        assert "No experiments" in render(empty, title="t")


def test_markdown_tables(store: Store):
    text = markdown_tables(store, resamples=200)
    assert text.count("### ") == 2
    assert "| vivace | 4 |" in text and "Paired by block against vivace" in text
    assert "video-3viewers" in text and "3/4 runs" in text


def test_a_source_change_during_the_experiment_is_flagged(tmp_path: Path):
    class Changing(FakeRunner):
        async def run(self, design, slot):
            record = await super().run(design, slot)
            record["versions"] = {"source_sha256": "old" if slot.block == 0 else "new"}
            return record

    design = Design(arms=("vivace", "cubic"), scenario="video-rttflap", runs=2, duration_s=5.0)
    with Store(tmp_path / "r.sqlite") as store:
        progress = Progress(4, 0, 1.0, stream=io.StringIO())
        asyncio.run(run_experiment(store, design, Changing(), progress=progress))
        assert "source changed during the experiment: 2 versions" in render(
            store, title="t", resamples=100
        )


def _run_view(store: Store, design: Design, runner: FakeRunner) -> ExperimentView:
    """Run `design` with `runner` into `store`; the report's view of it."""
    progress = Progress(len(design.arms) * design.runs, 0, 1.0, stream=io.StringIO())
    asyncio.run(run_experiment(store, design, runner, progress=progress))
    return ExperimentView(store, store.experiment(design.experiment_id))  # type: ignore[arg-type]


def test_cpu_starved_runs_are_counted_flagged_and_left_out(tmp_path: Path):
    class Starving(FakeRunner):
        async def run(self, design, slot):
            record = await super().run(design, slot)
            bad = slot.arm == "cubic" and slot.block == 0
            record.update(dropped_frames=60.0 if bad else 0.0, decoded_frames=300.0,
                          buffering_ratio_with_startup=0.5 if bad else 0.1)  # fmt: skip
            return record

    design = Design(arms=("vivace", "cubic"), scenario="video-rttflap", runs=3, duration_s=5.0)
    with Store(tmp_path / "r.sqlite") as store:
        view = _run_view(store, design, Starving())
        assert (view.starved_runs("vivace"), view.starved_runs("cubic")) == (0, 1)
        header, rows = summary_table(view, seed=1, resamples=100)
        assert header[:3] == ["arm", "runs", "CPU-starved"]
        assert "buffering ratio incl. startup (%)" in header and "dropped frames (%)" in header
        cubic = next(r for r in rows if r[0] == "cubic")
        assert cubic[1:3] == ["3", "1"]
        assert cubic[header.index("dropped frames (%)")].startswith("6.67")  # (20 + 0 + 0) / 3
        _, healthy = summary_table(view, seed=1, resamples=100, healthy_only=True)
        cubic = next(r for r in healthy if r[0] == "cubic")
        assert cubic[1:3] == ["2", "0"]
        assert cubic[header.index("dropped frames (%)")].startswith("0")
        page = render(store, title="t", resamples=100)
        assert "1 of 6 runs were CPU-starved (cubic 1): dropped 20.0 % of frames." in page
        assert "without the CPU-starved runs" in page
        text = markdown_tables(store, resamples=100)
        assert "**Warning:** 1 of 6 runs were CPU-starved" in text
        assert "Without the CPU-starved runs:" in text


def test_no_starvation_warning_without_flags(page: str, store: Store):
    assert "CPU-starved (" not in page
    view = ExperimentView(store, store.experiment(DESIGN.experiment_id))  # type: ignore[arg-type]
    # The fake records' only health input is the emulator's lateness (1-2 %): healthy.
    assert view.starved_runs("vivace") == 0
    assert view.starvation_warning() is None


def test_the_report_shows_each_runs_host_and_warns_about_split_blocks(tmp_path: Path):
    path = tmp_path / "hosts.sqlite"
    with Store(path) as store:
        progress = Progress(len(schedule(DESIGN)), 0, 1.0, stream=io.StringIO())
        asyncio.run(run_experiment(store, DESIGN, FakeRunner(), progress=progress))
        view = ExperimentView(store, store.experiments()[0])
        assert view.host_warning() is None  # every run on this machine
        # A lost worker's block finished on another machine.
        store.conn.execute(
            "UPDATE runs SET worker_host = 'node-7', cpu_model = 'Other CPU'"
            " WHERE block = 2 AND arm = 'cubic'"
        )
        store.conn.commit()
        view = ExperimentView(store, store.experiments()[0])
        assert view.split_blocks() == [2]
        assert "block 3" in (view.host_warning() or "")
        header, rows = view.hosts_table()
        assert header == ["block", "vivace", "cubic", "reno"]
        assert rows[2][2] == "node-7" and len(rows) == 4
        page = render(store, title="hosts", resamples=200)
        assert "node-7 (1 runs, Other CPU)" in page and "different hosts" in page
        assert "different hosts" in markdown_tables(store, resamples=200)


def test_the_slow_start_exit_is_reported_against_the_viewer_s_share(tmp_path: Path):
    class Exiting(FakeRunner):
        async def run(self, design, slot):
            record = await super().run(design, slot)
            if slot.arm == "vivace":  # left slow start at 6.6 Mbit/s on the 3.3 Mbit/s link
                record["telemetry"][0].append(
                    {"type": "mi", "t_ms": 900.0, "target_rate_bps": 6.6e6,
                     "decision": "exit-slow-start"})
            return record

    design = Design(arms=("vivace", "cubic"), scenario="video-rttflap", runs=2, duration_s=5.0)
    with Store(tmp_path / "r.sqlite") as store:
        view = _run_view(store, design, Exiting())
        assert view.values("vivace", SLOW_START_EXIT) == [2.0, 2.0]
        assert view.values("cubic", SLOW_START_EXIT) == [None, None]  # no PCC slow start
        header, rows = summary_table(view, seed=1, resamples=100)
        column = header.index("slow-start exit / link share (x)")
        assert rows[0][column].startswith("2")


def test_segments_requested_only_after_the_previous_one_arrived_are_counted(tmp_path: Path):
    def segment(index: int, requested: float, download: float,
                buffer: float = 0.3) -> dict[str, float]:
        return {"index": index, "requestedAtMs": requested, "downloadMs": download,
                "bufferAtRequestS": buffer}

    class Fetching(FakeRunner):
        async def run(self, design, slot):
            record = await super().run(design, slot)
            if slot.arm == "vivace":  # segment 1 asked for as segment 0 arrived, then prefetched
                segments = [segment(0, 40, 2700), segment(1, 2742, 2100),
                            segment(2, 2743, 4000), segment(3, 4850, 4000),
                            segment(4, 9000, 3000, buffer=9.9)]  # held back at a full buffer
            else:  # every segment asked for while the one before downloads
                segments = [segment(0, 30, 2500), segment(1, 600, 2600), segment(2, 2600, 3900)]
            record["viewers"][0]["segments"] = segments[::-1]  # stored in arrival order
            return record

    design = Design(arms=("vivace", "cubic"), scenario="video-rttflap", runs=2, duration_s=5.0)
    with Store(tmp_path / "r.sqlite") as store:
        view = _run_view(store, design, Fetching())
        assert view.values("vivace", LATE_SEGMENT_REQUESTS) == [1.0, 1.0]
        assert view.values("cubic", LATE_SEGMENT_REQUESTS) == [0.0, 0.0]
        header, rows = summary_table(view, seed=1, resamples=100)
        assert "segments requested late (count)" in header


def test_report_gives_the_emulators_timer_lateness(page: str):
    # Block 0 of each experiment was late for 2 % of its runs, the others for 1 %.
    assert "fired over 1 ms late (a host stall, or the emulator short of CPU)" in page
    assert "max 2 %; the latest by 12.5 ms." in page

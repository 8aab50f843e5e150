"""The VOD startup summary (python -m pccstream.ab.startup) over an ab database."""

from __future__ import annotations

import asyncio
import io
import json
import statistics
from pathlib import Path

from pccstream.ab.design import Design, schedule
from pccstream.ab.experiment import run_experiment
from pccstream.ab.progress import Progress
from pccstream.ab.startup import (
    main,
    markdown,
    median_phases,
    startup_phases,
    startup_rtt_ms,
    summarize_db,
)
from pccstream.ab.store import Store

from .fakes import FakeRunner

DESIGN = Design(arms=("vivace", "cubic"), scenario="video-rttflap", runs=3, seed=2,
                duration_s=10.0, bitrate_kbps=3000, player_params=(("startRendition", "abr"),))


def test_startup_rtt_is_the_smallest_min_rtt_while_starting() -> None:
    viewer = [
        {"type": "hello"},
        {"type": "sample", "t_ms": 100.0, "min_rtt_ms": 0},  # no RTT sample yet
        {"type": "sample", "t_ms": 200.0, "min_rtt_ms": 62.5},
        {"type": "sample", "t_ms": 900.0, "min_rtt_ms": 60.0},
        {"type": "sample", "t_ms": 5000.0, "min_rtt_ms": 11.0},  # after startup: ignored
    ]
    assert startup_rtt_ms([viewer]) == 60.0
    assert startup_rtt_ms([]) is None


def test_startup_rtt_within_the_startup_else_the_first_sample() -> None:
    viewer = [
        {"type": "sample", "t_ms": 100.0, "min_rtt_ms": 80.0},
        {"type": "sample", "t_ms": 500.0, "min_rtt_ms": 78.0},
        {"type": "sample", "t_ms": 1500.0, "min_rtt_ms": 20.0},  # the RTT fell after startup
    ]
    assert startup_rtt_ms([viewer], 600.0) == 78.0
    assert startup_rtt_ms([viewer], 50.0) == 80.0  # no sample that early: the first one
    assert startup_rtt_ms([viewer]) == 20.0  # no startup: the first 2 s


def test_startup_phases_and_their_medians() -> None:
    viewers = [{"startupPhases": {"sessionReadyMs": 200, "firstFrameMs": None}}, {}]
    assert startup_phases(viewers) == {"sessionReadyMs": 200.0}
    assert startup_phases([{}]) is None and startup_phases([]) is None
    assert median_phases([{"a": 1.0, "b": 5.0}, {"a": 3.0}, None]) == {"a": 2.0, "b": 5.0}


def test_markdown_has_a_phase_table_when_runs_have_phases() -> None:
    row = {"db": "x.sqlite", "label": "none", "arm": "cubic", "runs": 1,
           "median_startup_ms": 300.0, "median_first_frame_ms": 290.0, "median_budget_ms": 600.0,
           "runs_within_budget": 1, "buffering_ratio_mean": 0.0, "buffering_ratio_ci95": [0, 0],
           "max_loadavg_1min_start": 0.5,
           "median_phases_ms": {"sessionReadyMs": 150.0, "firstFrameMs": 290.0}}
    text = markdown([row])
    assert "| x.sqlite | none | cubic | 1 | 300 | 290 | 600 | 1/1 |" in text
    assert "| database | arm | sessionReady | firstFrame |" in text
    assert "| x.sqlite | cubic | 150 | 290 |" in text
    assert "Startup phases" not in markdown([{**row, "median_phases_ms": {}}])


def test_summary_per_experiment_and_arm(tmp_path: Path) -> None:
    db = tmp_path / "startup.sqlite"
    with Store(db) as store:
        progress = Progress(len(schedule(DESIGN)), 0, 1.0, stream=io.StringIO())
        asyncio.run(run_experiment(store, DESIGN, FakeRunner(), progress=progress))
        stored = {arm: [r["startup_delay_ms"] for r in store.runs(DESIGN.experiment_id)
                        if r["arm"] == arm] for arm in DESIGN.arms}
    summary = summarize_db(db)
    assert sorted(s["arm"] for s in summary) == ["cubic", "vivace"]
    for s in summary:
        assert s["runs"] == 3
        assert s["player_params"] == {"startRendition": "abr"}
        assert s["median_startup_ms"] == statistics.median(stored[s["arm"]])
        assert s["median_budget_ms"] is None  # the fake telemetry has no min_rtt_ms
        assert len(s["per_run"]) == 3
    assert main([str(tmp_path), "--json", str(tmp_path / "s.json"),
                 "--md", str(tmp_path / "s.md")]) == 0
    assert len(json.loads((tmp_path / "s.json").read_text())) == 2
    assert "median startup ms" in (tmp_path / "s.md").read_text()

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
from pccstream.ab.startup import main, startup_rtt_ms, summarize_db
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

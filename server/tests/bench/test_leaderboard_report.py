"""The leaderboard campaign's summary (infra/experiments/leaderboard.sh's output)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pccstream.bench import leaderboard_report as report
from pccstream.errors import UserError


def _run(directory: Path, scenario: str, arm: str, run: int, mbps: float, delay: float) -> None:
    path = directory / scenario / f"{arm.replace(':', '_').replace('=', '_')}.run{run}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    row = {"arm": arm, "throughput_mbps": mbps, "p95_signal_delay_ms": delay,
           "power": mbps * 1000 / delay, "errors": []}
    path.write_text(json.dumps({"duration_s": 140, "rows": [row]}))


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    for run, (s, c, r) in enumerate([(3.0, 4.0, 1.5), (3.3, 4.2, 1.8), (3.6, 4.4, 2.1)], 1):
        _run(tmp_path, "verizon-lte-short", "sprout", run, s, 100.0 + run)
        _run(tmp_path, "verizon-lte-short", "cubic", run, c, 4000.0)
        _run(tmp_path, "verizon-lte-short", "remy:table=2014-100x", run, r, 80.0)
    _run(tmp_path, "tmobile-lte-short", "sprout", 1, 12.0, 80.0)
    (tmp_path / "loads.txt").write_text(
        "verizon-lte-short sprout 1 start 2026-01-01T00:00:00Z 0.30 0.2 0.1\n"
        "verizon-lte-short sprout 1 end 2026-01-01T00:02:30Z 1.30 0.2 0.1\n"
        "verizon-lte-short sprout 2 start 2026-01-01T00:05:00Z 2.50 0.2 0.1\n")
    return tmp_path


def test_medians_spread_loads_and_anchors(campaign: Path) -> None:
    summary = report.summarize(report.read_runs(campaign))
    verizon = summary["scenarios"]["verizon-lte-short"]
    assert list(verizon) == ["sprout", "remy:table=2014-100x", "cubic"]  # by median power
    sprout = verizon["sprout"]
    assert sprout["throughput_mbps"] == {"median": 3.3, "min": 3.0, "max": 3.6, "n": 3}
    assert sprout["p95_signal_delay_ms"]["median"] == 102.0
    assert sprout["load1_max"] == 2.5  # the start loads only
    anchors = sprout["anchors"]
    assert anchors["cubic_delay_over_arm"] == pytest.approx(4000 / 102)
    assert anchors["throughput_over_cubic"] == pytest.approx(3.3 / 4.2)
    assert anchors["issue_bar_met"] is True  # 0.0255x the delay at 0.79x the throughput
    assert anchors["power_over_contest_best"] == pytest.approx(3300 / 102 / 41.9)
    assert anchors["delay_over_contest_best"] == pytest.approx(102 / 79)
    assert verizon["remy:table=2014-100x"]["anchors"]["issue_bar_met"] is False  # 0.43x
    # No Cubic on T-Mobile: no Cubic ratios; not the contest trace: no contest ratios.
    assert summary["scenarios"]["tmobile-lte-short"]["sprout"]["anchors"] == {}
    text = report.format_report(summary)
    assert "| sprout | 3 | 3.30 (3.00–3.60) | 102 (101–103) |" in text
    assert "2.50 (busy)" in text and "met" in text


def test_plots_one_per_scenario(campaign: Path) -> None:
    runs = report.read_runs(campaign)
    written = report.plot(runs, report.summarize(runs), campaign / "plots")
    assert sorted(p.name for p in written) == ["tmobile-lte-short.svg", "verizon-lte-short.svg"]


def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UserError, match="no SCENARIO/ARM.runN.json files"):
        report.read_runs(tmp_path)
    bad = tmp_path / "verizon-lte-short" / "sprout.run1.json"
    bad.parent.mkdir()
    bad.write_text("{}")
    assert report.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "sprout.run1.json: not a `bench leaderboard --json` result" in err
    assert "\n" not in err

"""The cellular target table read from bench transfer JSON files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pccstream.bench.cellular import load_rows, main, markdown
from pccstream.bench.transfer import summarize_arm
from pccstream.errors import UserError


def _doc(scenario: str, medians: dict[str, tuple[float, float]]) -> dict[str, object]:
    return {"benchmark": "transfer", "scenario": scenario, "duration_s": 140.0, "runs": 3,
            "arms": {arm: {"median": {"throughput_mbps": thr, "p95_signal_delay_ms": delay,
                                      "power": thr * 1000 / delay}}
                     for arm, (thr, delay) in medians.items()}}


def test_targets_are_checked_against_bbr_and_ewma_bdp(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(_doc("a", {
        "vivace-lte": (3.0, 40.0), "bbr": (5.0, 200.0), "ewma-bdp": (2.0, 30.0)})))
    (tmp_path / "b.json").write_text(json.dumps(_doc("b", {
        "vivace-lte": (2.0, 120.0), "bbr": (5.0, 200.0), "ewma-bdp": (2.0, 30.0)})))
    a, b = load_rows(tmp_path)
    assert (a["delay_ok"], a["throughput_ok"], a["power_ok"]) == (True, True, True)
    assert a["delay_ratio_vs_bbr"] == pytest.approx(0.2)
    assert (b["delay_ok"], b["throughput_ok"], b["power_ok"]) == (False, False, False)
    table = markdown([a, b])
    assert "| a | 3.00 @ 40 (75.0)" in table and "0.60 ✗" in table


def test_bad_input_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UserError, match="no bench transfer JSON"):
        load_rows(tmp_path)
    (tmp_path / "x.json").write_text("{not json")
    assert main([str(tmp_path)]) == 2
    assert "x.json: not a bench transfer JSON file" in capsys.readouterr().err
    (tmp_path / "x.json").write_text(json.dumps({"benchmark": "transfer", "arms": [1]}))
    assert main([str(tmp_path)]) == 2
    assert "x.json: 'arms' is not an object of arm summaries" in capsys.readouterr().err
    (tmp_path / "x.json").write_text(json.dumps({"benchmark": "transfer", "runs": "3"}))
    assert main([str(tmp_path)]) == 2
    assert "x.json: 'runs' is '3', not a run count" in capsys.readouterr().err


def test_a_variant_is_checked_and_the_trace_floor_is_reported(tmp_path: Path) -> None:
    variant = "vivace-lte:bdp_cap_gain=1.25"
    (tmp_path / "v.json").write_text(json.dumps(_doc("verizon-lte-short", {
        "vivace-lte": (4.6, 185.0), variant: (4.2, 130.0), "bbr": (4.8, 493.0),
        "ewma-bdp": (3.0, 102.0)})))
    row, = load_rows(tmp_path, variant)
    assert row["profile"] == variant and row["delay_ratio_vs_bbr"] == pytest.approx(130 / 493)
    # Verizon-LTE-short's downlink leaves 31 ms at the p95 even to a sender that never queues.
    assert row["floor_ms"] == 31.0 and row["floor_ratio_vs_bbr"] == pytest.approx(31 / 493)
    table = markdown([row])
    assert "| verizon-lte-short | 4.20 @ 130" in table and "| 31 (0.06) |" in table


def test_a_scenario_without_a_trace_has_no_floor(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(_doc("no-such-scenario", {
        "vivace-lte": (3.0, 40.0), "bbr": (5.0, 200.0)})))
    row, = load_rows(tmp_path)
    assert row["floor_ms"] is None and "floor_ratio_vs_bbr" not in row
    assert "| — |" in markdown([row])


def test_a_profile_no_file_has_is_one_line(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.json").write_text(json.dumps(_doc("a", {"bbr": (5.0, 200.0)})))
    assert main([str(tmp_path), "--profile", "vivace-lte:bdp_cap_gain=2"]) == 2
    assert "--profile vivace-lte:bdp_cap_gain=2: no file in" in capsys.readouterr().err


def test_the_profiles_silence_verdicts_are_listed_per_run(tmp_path: Path) -> None:
    doc = _doc("a", {"vivace-lte": (3.0, 40.0), "bbr": (5.0, 200.0)})
    doc["arms"]["vivace-lte"]["runs"] = [  # type: ignore[index]
        {"ack_silences": [{"held": 126, "out": 111, "hold_share": 0.53}]},
        {"ack_silences": None}]  # a run from before the verdicts were recorded
    (tmp_path / "a.json").write_text(json.dumps(doc))
    row, = load_rows(tmp_path)
    assert row["ack_silences"] == [{"held": 126, "out": 111, "hold_share": 0.53}]
    assert "| 126/111 (0.53) |" in markdown([row])
    (tmp_path / "a.json").write_text(json.dumps(_doc("a", {"vivace-lte": (3.0, 40.0)})))
    assert "silences" not in markdown(load_rows(tmp_path))


def _runs(arm: str, *outcomes: tuple[float, float, bool]) -> dict[str, object]:
    """A file of one arm with its per-run records (throughput, delay, starved)."""
    runs = [{"run": i, "throughput_mbps": thr, "p95_signal_delay_ms": delay,
             "power": thr * 1000 / delay, "cpu_starved": int(starved)}
            for i, (thr, delay, starved) in enumerate(outcomes)]
    doc = _doc("r", {})
    doc["runs"] = len(runs)
    doc["arms"] = {arm: summarize_arm(runs)}
    return doc


def test_arms_from_separate_files_of_a_recording_are_compared(tmp_path: Path) -> None:
    (tmp_path / "r-ours.json").write_text(json.dumps(_runs(
        "vivace-lte", (4.0, 150.0, False), (4.2, 140.0, False), (4.4, 130.0, False))))
    (tmp_path / "r-bbr.json").write_text(json.dumps(_runs(
        "bbr", (5.0, 500.0, False), (5.0, 520.0, False), (5.0, 480.0, False))))
    row, = load_rows(tmp_path)
    assert row["files"] == ["r-bbr.json", "r-ours.json"]
    assert row["delay_ratio_vs_bbr"] == pytest.approx(140 / 500)
    assert "4.20 @ 140 (30.0) ×3" in markdown([row])


def test_an_arm_in_two_files_pools_its_runs_without_the_starved_ones(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(_runs(
        "bbr", (5.0, 400.0, False), (1.0, 9000.0, True))))
    (tmp_path / "b.json").write_text(json.dumps(_runs(
        "bbr", (5.0, 600.0, False), (5.0, 500.0, False))))
    row, = load_rows(tmp_path)
    # Median of 400, 600 and 500: the starved run is left out of the pooled medians.
    assert row["arms"]["bbr"]["p95_signal_delay_ms"] == 500.0
    assert row["arms"]["bbr"]["median_runs"] == 3 and not row["arms"]["bbr"]["flagged"]
    assert "†" not in markdown([row])


def test_an_arm_whose_every_run_was_starved_is_marked(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(_runs("bbr", (4.8, 991.0, True))))
    row, = load_rows(tmp_path)
    assert row["arms"]["bbr"]["flagged"] and "4.80 @ 991 (4.8) ×1†" in markdown([row])
    assert "† every run of that arm was CPU-starved" in markdown([row])


def test_other_durations_of_a_recording_stay_apart(tmp_path: Path) -> None:
    short = _runs("bbr", (5.0, 400.0, False))
    full = {**_runs("bbr", (5.0, 600.0, False)), "duration_s": 786.0}
    (tmp_path / "a.json").write_text(json.dumps(short))
    (tmp_path / "b.json").write_text(json.dumps(full))
    assert [r["duration_s"] for r in load_rows(tmp_path)] == [140.0, 786.0]


def test_an_arm_without_runs_in_two_files_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.json").write_text(json.dumps(_doc("r", {"bbr": (5.0, 200.0)})))
    assert main([str(tmp_path)]) == 2
    assert "a.json, b.json: arm bbr is in each" in capsys.readouterr().err

"""The cellular target table read from bench transfer JSON files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pccstream.bench.cellular import load_rows, main, markdown
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

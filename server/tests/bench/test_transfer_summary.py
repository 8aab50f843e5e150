"""`bench transfer` flags runs that measured the host, and its medians leave them out."""

from __future__ import annotations

from typing import Any

from pccstream.bench.cli import format_transfer
from pccstream.bench.transfer import MEDIAN_KEYS, Arm, _ack_silences, _FlowRecord, summarize_arm


def _run(run: int, inflation_ms: float, late_share: float) -> dict[str, Any]:
    starved = late_share >= 0.05
    return {
        **dict.fromkeys(MEDIAN_KEYS),
        "run": run,
        "utilization": 0.93,
        "rtt_p95_inflation_ms": inflation_ms,
        "emulator_late_share": late_share,
        "cpu_starved": int(starved),
        "cpu_starved_reason": "host stalled" if starved else None,
    }


def test_the_medians_leave_out_the_runs_the_host_stalled() -> None:
    # Session 45's second 1-BDP bench: runs 3 and 4 stalled for 6 and 28 % of their time.
    runs = [_run(0, 7.2, 0.019), _run(1, 9.1, 0.017), _run(2, 17.3, 0.060),
            _run(3, 23.1, 0.278), _run(4, 6.4, 0.010)]
    arm = summarize_arm(runs)
    assert arm["starved_runs"] == [2, 3]
    assert arm["median_runs"] == 3
    assert arm["median"]["rtt_p95_inflation_ms"] == 7.2
    assert arm["median_all_runs"]["rtt_p95_inflation_ms"] == 9.1
    assert arm["runs"] is runs


def test_when_every_run_is_flagged_the_medians_are_over_all_of_them() -> None:
    arm = summarize_arm([_run(0, 17.3, 0.06), _run(1, 23.1, 0.28)])
    assert arm["starved_runs"] == [0, 1] and arm["median_runs"] == 2
    assert arm["median"] == arm["median_all_runs"]


def test_the_table_names_the_flagged_runs() -> None:
    runs = [_run(0, 7.2, 0.019), _run(1, 17.3, 0.06)]
    result = {"scenario": "const-12mbps-30ms-1bdp", "duration_s": 60.0, "runs": 2, "flows": 1,
              "compete": False, "arms": {"vivace": summarize_arm(runs)}}
    text = format_transfer(result)
    assert "vivace: run(s) 2 CPU-starved (--json: cpu_starved_reason); medians over the others" \
        in text
    every = {**result, "arms": {"vivace": summarize_arm([runs[1]])}}
    assert "medians over all runs" in format_transfer(every)


def test_each_flow_reports_the_ack_silences_its_controller_judged() -> None:
    """The last telemetry sample carrying verdicts gives the flow's count; flows whose
    controller does not judge silences report None, and a run with none at all None."""
    judged = _FlowRecord(Arm.parse("vivace-lte"), telemetry=[
        {"type": "sample", "ack_silences_held": 1, "ack_silences_out": 0,
         "ack_silence_hold_share": 1.0},
        {"type": "mi", "state": "moving"},
        {"type": "sample", "ack_silences_held": 3, "ack_silences_out": 2,
         "ack_silence_hold_share": 0.61},
        {"type": "sample", "cwnd_bytes": 1200},  # a sample without them is not a reset
    ])
    plain = _FlowRecord(Arm.parse("bbr"), telemetry=[{"type": "sample", "cwnd_bytes": 1200}])
    assert _ack_silences([judged, plain]) == [{"held": 3, "out": 2, "hold_share": 0.61}, None]
    assert _ack_silences([plain]) is None

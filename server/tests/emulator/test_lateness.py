"""The timer-lateness summary: the host's stalls as the emulator sees them."""

from __future__ import annotations

import pytest

from pccstream.emulator.lateness import HEADER_KEY, TimerLateness, parse_summary


def test_stalls_are_counted_summed_and_shared_over_the_span() -> None:
    meter = TimerLateness()
    for late in [0.05] * 96 + [0.5, 2.0, 6.0, 12.0]:
        meter.observe(late)
    meter.observe(-0.01)  # a timer that fired a hair early counts as on time
    summary = meter.summary(span_ms=1000.0)
    assert summary["wakes"] == 101
    assert summary["over_1ms"] == 3 and summary["over_5ms"] == 2 and summary["over_10ms"] == 1
    assert summary["max_ms"] == 12.0
    # Only lateness past 1 ms counts as a stall: 2 + 6 + 12 ms of 1 s.
    assert summary["stalled_share"] == pytest.approx(0.02)


def test_the_percentile_is_read_to_the_bins_upper_edge() -> None:
    meter = TimerLateness()
    for late in [0.05] * 98 + [3.04, 40.0]:
        meter.observe(late)
    assert meter.percentile(50) == 0.1
    assert meter.percentile(99) == 3.1
    assert meter.percentile(100) == 40.1
    assert TimerLateness().percentile(99) == 0.0


def test_a_stall_longer_than_the_histogram_still_sets_the_maximum() -> None:
    meter = TimerLateness()
    meter.observe(250.0)
    assert meter.summary(1000.0)["max_ms"] == 250.0
    assert meter.percentile(99) == pytest.approx(100.1)


def test_a_log_without_the_summary_or_with_a_bad_one_gives_none() -> None:
    assert parse_summary({}) is None
    assert parse_summary({HEADER_KEY: "not json"}) is None
    assert parse_summary({HEADER_KEY: "[1, 2]"}) is None
    assert parse_summary({HEADER_KEY: '{"wakes": 3}'}) == {"wakes": 3}

"""The timer-lateness summary: the host's stalls as the emulator sees them."""

from __future__ import annotations

import pytest

from pccstream.emulator.lateness import HEADER_KEY, TimerLateness, parse_summary


def _observe_apart(meter: TimerLateness, lates: list[float]) -> None:
    """Wakes 50 ms apart, so no two late spells overlap."""
    for i, late in enumerate(lates):
        meter.observe(late, now_ms=50.0 * (i + 1))


def test_stalls_are_counted_summed_and_shared_over_the_span() -> None:
    meter = TimerLateness()
    _observe_apart(meter, [0.05] * 96 + [0.5, 2.0, 6.0, 12.0])
    meter.observe(-0.01, now_ms=6000.0)  # a timer that fired a hair early counts as on time
    summary = meter.summary(span_ms=1000.0)
    assert summary["wakes"] == 101
    assert summary["over_1ms"] == 3 and summary["over_5ms"] == 2 and summary["over_10ms"] == 1
    assert summary["max_ms"] == 12.0
    # Only lateness past 1 ms counts as a stall: 2 + 6 + 12 ms of 1 s.
    assert summary["stalled_share"] == pytest.approx(0.02)


def test_one_stall_that_holds_two_timers_counts_once() -> None:
    # Timers due at 100 and 104 ms both fire at 110 ms, after one 10 ms stall.
    meter = TimerLateness()
    meter.observe(10.0, now_ms=110.0)
    meter.observe(6.0, now_ms=110.0)
    meter.observe(3.0, now_ms=200.0)  # a later, separate stall
    assert meter.summary(span_ms=1000.0)["stalled_share"] == pytest.approx(0.013)
    assert meter.summary(span_ms=1000.0)["over_5ms"] == 2


def test_the_percentile_is_read_to_the_bins_upper_edge() -> None:
    meter = TimerLateness()
    _observe_apart(meter, [0.05] * 98 + [3.04, 40.0])
    assert meter.percentile(50) == 0.1
    assert meter.percentile(99) == 3.1
    assert meter.percentile(100) == 40.1
    assert TimerLateness().percentile(99) == 0.0


def test_a_stall_longer_than_the_histogram_still_sets_the_maximum() -> None:
    meter = TimerLateness()
    meter.observe(250.0, now_ms=1000.0)
    assert meter.summary(1000.0)["max_ms"] == 250.0
    assert meter.percentile(99) == pytest.approx(100.1)


def test_a_log_without_the_summary_or_with_a_bad_one_gives_none() -> None:
    assert parse_summary({}) is None
    assert parse_summary({HEADER_KEY: "not json"}) is None
    assert parse_summary({HEADER_KEY: "[1, 2]"}) is None
    assert parse_summary({HEADER_KEY: '{"wakes": 3}'}) == {"wakes": 3}

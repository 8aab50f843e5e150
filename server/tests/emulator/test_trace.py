from __future__ import annotations

import pytest

from pccstream.emulator.trace import (
    PACKET_SIZE,
    constant_rate_trace,
    load_trace,
    parse_rate,
    parse_trace,
)
from pccstream.errors import UserError


def test_repeated_timestamps_are_several_opportunities() -> None:
    t = parse_trace("0\n1\n1\n1\n5\n", "x")
    assert t.times == (0, 1, 5)
    assert t.counts == (1, 3, 1)
    assert t.period_ms == 5
    assert t.opportunities == 5
    assert t.average_bps() == pytest.approx(5 * PACKET_SIZE * 8 * 1000 / 5)


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("", None, "empty"),
        ("1\n2\nabc\n", 3, "not a non-negative integer"),
        ("1\n-2\n", 2, "not a non-negative integer"),
        ("1.5\n", 1, "not a non-negative integer"),
        ("5\n3\n", 2, "non-decreasing"),
        ("1\n\n2\n", 2, "empty line"),
        ("0\n0\n", None, "nonzero"),
    ],
)
def test_malformed_trace_names_file_and_line(write, text: str, line: int | None, what: str) -> None:
    path = write("bad.trace", text)
    with pytest.raises(UserError) as exc:
        load_trace(path)
    msg = str(exc.value)
    assert str(path) in msg
    assert what in msg
    if line is not None:
        assert f"{path}:{line}:" in msg


def test_missing_trace_file(tmp_path) -> None:
    with pytest.raises(UserError, match="not found"):
        load_trace(tmp_path / "nope")


def test_constant_rate_is_exact_for_12mbit() -> None:
    t = constant_rate_trace(12e6)
    # 12e6 / (1504 * 8 * 1000) = 375/376 opportunities per ms
    assert (t.opportunities, t.period_ms) == (375, 376)
    assert t.average_bps() == pytest.approx(12e6, rel=1e-12)
    # evenly spread: never more than one opportunity per ms below 12.03 Mbit/s
    assert max(t.counts) == 1


@pytest.mark.parametrize("rate", [1e6, 2.5e6, 20e6, 7.345678e6, 100e6, 1e9])
def test_constant_rate_average(rate: float) -> None:
    t = constant_rate_trace(rate)
    assert t.average_bps() == pytest.approx(rate, rel=1e-6)
    assert t.period_ms <= 60_000


def test_count_upto_loops() -> None:
    t = parse_trace("1\n3\n", "x")  # period 3: opportunities at 1, 3, 4, 6, 7, 9, ...
    assert [t.count_upto(x) for x in range(0, 10)] == [0, 1, 1, 2, 3, 3, 4, 5, 5, 6]
    # negative times count back into earlier loops: the previous loop has t=1 at -2
    assert t.count_upto(-1) - t.count_upto(-3) == 1


@pytest.mark.parametrize(
    ("text", "bps"),
    [("12mbit", 12e6), ("12Mbps", 12e6), ("500kbit", 5e5), ("1.5Mbit/s", 1.5e6), ("20m", 20e6),
     ("1e6", 1e6), ("1gbit", 1e9)],
)
def test_parse_rate(text: str, bps: float) -> None:
    assert parse_rate(text) == pytest.approx(bps)


@pytest.mark.parametrize("text", ["fast", "0mbit", "-3mbit", "12 furlongs"])
def test_parse_rate_rejects(text: str) -> None:
    with pytest.raises(UserError):
        parse_rate(text, "--down")

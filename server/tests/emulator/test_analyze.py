"""Analysis against small hand-computed logs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pccstream.emulator.analyze import analyze_file, signal_delay_floor_ms
from pccstream.emulator.link import Link
from pccstream.emulator.log import EventLog
from pccstream.emulator.packet import Packet
from pccstream.emulator.trace import parse_trace
from pccstream.errors import UserError
from pccstream.stats import signal_delays

HEADER = "# pccstream-emulator-log 1\n# base_monotonic_ns: 0\n"

# down: capacity 4 x 1500 B in 0..10 ms; three 1500-B packets arrive at 0, 1, 2 and leave at
# 4, 6, 10 (queue delays 4, 5, 8); one 1500-B packet dropped by the queue at 3.
SMALL = HEADER + """\
0 d + 1500
1 d + 1500
2 d + 1500
3 d + 1500
3 d x 1500 queue
4 d # 1500
4 d - 1500 4 24
6 d # 1500
6 d - 1500 5 25
8 d # 1500
10 d # 1500
10 d - 1500 8 28
"""


def test_small_log_by_hand(write) -> None:
    r = analyze_file(write("s.log", SMALL))["down"]
    # span 0..10 ms; capacity 4 x 1500 x 8 bits / 10 ms = 4.8 Mbit/s; throughput 3.6 Mbit/s
    assert r["capacity_mbps"] == pytest.approx(4.8)
    assert r["throughput_mbps"] == pytest.approx(3.6)
    assert r["utilization"] == pytest.approx(0.75)
    # sorted queue delays [4, 5, 8]; index floor(0.95 * 3) = 2 -> 8
    assert r["p95_queue_delay_ms"] == 8
    # signal delay per ms from the arrivals 0, 1, 2 (delays 4, 5, 8): [4, 5, 8] -> p95 = 8
    assert r["p95_signal_delay_ms"] == 8
    assert r["loss_rate"] == pytest.approx(0.25)
    assert r["power"] == pytest.approx(3.6 * 1000 / 8)
    assert r["p95_one_way_delay_ms"] == 28
    assert r["drops"] == {"queue": 1}
    assert "up" not in analyze_file(write("s2.log", SMALL))


def test_signal_delay_fills_gaps_like_mm_throughput_graph() -> None:
    # Arrivals at 0 and 5, departures at 10 and 12: ms 1..4 have no packet; their signal delay
    # is the next packet's plus the wait: sd[4] = 7 + 1, sd[3] = 9, ..., sd[1] = 11.
    sd = signal_delays(np.array([0.0, 5.0]), np.array([10.0, 12.0]))
    assert list(sd) == [10, 11, 10, 9, 8, 7]


def test_signal_delay_takes_the_least_for_data_at_or_after_t() -> None:
    # A packet sent at 0 takes 20 ms, one sent at 1 takes 3: data at or after 0 arrives by 4.
    sd = signal_delays(np.array([0.0, 1.0]), np.array([20.0, 4.0]))
    assert list(sd) == [4, 3]


def test_the_floor_is_each_millisecond_s_wait_for_the_next_opportunity() -> None:
    # An opportunity every 10 ms: waits 0, 9, 8, ... 1 ms; a tenth of the milliseconds wait 9.
    assert signal_delay_floor_ms(parse_trace("\n".join(str(t) for t in range(0, 101, 10)),
                                             "t")) == 9.0
    # A 900 ms outage in 1 s: the p95 millisecond waits most of it.
    outage = "\n".join([*map(str, range(100)), "1000"])
    assert signal_delay_floor_ms(parse_trace(outage, "t")) == 850.0


def test_model_log_round_trip(tmp_path) -> None:
    """Log written by the link model, analysed: the numbers match the model's own counters."""
    path = tmp_path / "m.log"
    with open(path, "w") as fh:
        log = EventLog(fh, 0, {"test": True})
        link = Link("down", parse_trace("1\n2\n3\n4\n", "t"), delay_ms=10, log=log)
        for _ in range(3):
            link.enqueue(Packet(0.0, 1500), 0.0)
        link.rationalize(8)
        assert len(link.pop_ready(13)) == 3
    r = analyze_file(path)["down"]
    # events span 0..13 ms (pop_ready brought the link to 13): one opportunity per ms;
    # 3 departures at 1, 2, 3
    assert r["capacity_mbps"] == pytest.approx(13 * 1504 * 8 / 13 / 1000)
    assert r["throughput_mbps"] == pytest.approx(3 * 1500 * 8 / 13 / 1000)
    assert r["p95_queue_delay_ms"] == 3
    assert r["p95_one_way_delay_ms"] == 13
    assert r["loss_rate"] == 0


def test_bad_log_names_file_and_line(write) -> None:
    p = write("bad.log", HEADER + "0 d + 1500\n1 d - oops\n")
    with pytest.raises(UserError, match=r"bad\.log:4:"):
        analyze_file(p)
    with pytest.raises(UserError, match="neither a pccstream emulator log"):
        analyze_file(write("x.log", "hello\n"))


def test_plot_writes_file(write, tmp_path) -> None:
    from pccstream.emulator.plot import plot_log

    out = tmp_path / "p.png"
    plot_log(write("s.log", SMALL), out, bin_ms=2)
    assert out.stat().st_size > 1000
    svg = tmp_path / "p.svg"
    plot_log(write("s.log", SMALL), svg)
    assert svg.read_text().lstrip().startswith("<?xml")


def test_json_keys(write) -> None:
    r = analyze_file(write("s.log", SMALL))
    keys = {"capacity_mbps", "throughput_mbps", "utilization", "p95_queue_delay_ms",
            "p95_signal_delay_ms", "loss_rate", "power"}
    assert keys <= set(r["down"])
    json.dumps(r)

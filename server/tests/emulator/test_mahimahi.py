"""mahimahi's mm-link log: `emulate analyze` gives mm-throughput-graph's numbers, and the
emulator's `--log-format mahimahi` writes what mm-link writes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pccstream.emulator.__main__ import main
from pccstream.emulator.analyze import analyze_file
from pccstream.emulator.link import Link
from pccstream.emulator.mahimahi import MahimahiLog, parse_mahimahi
from pccstream.emulator.packet import Packet
from pccstream.emulator.queues import DropTailQueue
from pccstream.emulator.trace import constant_rate_trace
from pccstream.errors import UserError

DATA = Path(__file__).parent / "data"


def test_hand_checked_vector_gives_mm_throughput_graph_numbers(capsys) -> None:
    expected = json.loads((DATA / "mm-link-small.expected.json").read_text())
    result = analyze_file(DATA / "mm-link-small.log")
    assert list(result) == [expected["direction"]]
    got = result[expected["direction"]]
    for key, value in expected.items():
        if key in ("direction", "mm_throughput_graph_stderr"):
            continue
        assert got[key] == pytest.approx(value), key
    # The text report prints the same lines mm-throughput-graph prints.
    assert main(["emulate", "analyze", str(DATA / "mm-link-small.log")]) == 0
    out = capsys.readouterr().out
    for line in expected["mm_throughput_graph_stderr"]:
        assert line in out


def test_a_log_without_base_timestamp_or_departures_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("# mahimahi mm-link (uplink) [x] > a.log\n5 + 1500\n")
    with pytest.raises(UserError, match=r"a.log:2: event before the '# base timestamp:' line"):
        analyze_file(log)
    log.write_text("# mahimahi mm-link (uplink) [x] > a.log\n# base timestamp: 0\n5 + 1500\n")
    with pytest.raises(UserError, match="no departures"):
        analyze_file(log)
    log.write_text("# mahimahi mm-link (uplink) [x] > a.log\n# base timestamp: 0\n5 ? 1500\n")
    with pytest.raises(UserError, match=r"a.log:3: .*unknown event '\?'"):
        analyze_file(log)


class _Stream(io.StringIO):
    def close(self) -> None:  # keep the text readable after the log closes
        pass


def test_the_link_model_writes_mm_link_lines() -> None:
    down = _Stream()
    log = MahimahiLog({"d": down})
    # 12 Mbit/s = one 1504-byte opportunity per ms; a 3-packet queue; 8 packets at t=0.5 ms.
    link = Link("down", constant_rate_trace(12e6), DropTailQueue(max_packets=3), log=log)
    for _ in range(8):
        link.enqueue(Packet(0.5, 1228), 0.5)
    link.rationalize(20.0)
    log.close()
    lines = down.getvalue().splitlines()
    arrivals = [line for line in lines if " + " in line]
    drops = [line for line in lines if " d " in line]
    departures = [line.split() for line in lines if " - " in line]
    assert arrivals == ["0 + 1228"] * 8
    assert len(drops) == link.dropped and drops[0] == "0 d 1 1228"
    assert len(departures) == 8 - link.dropped
    # Delay = departure - arrival, whole ms, as mm-link computes it.
    assert [int(t) - int(delay) for t, _, _, delay in departures] == [0] * len(departures)
    assert all(line.endswith(" # 1504") for line in lines if "#" in line)


def test_emulate_writes_mahimahi_logs_that_analyze_reads(tmp_path: Path) -> None:
    import asyncio
    import socket

    from pccstream.emulator.relay import Emulator

    down, up = tmp_path / "down.log", tmp_path / "up.log"
    emu = Emulator.from_settings(
        upstream="127.0.0.1:9", down="12mbit", up="6mbit", queue="10pkts",
        log=str(down), log_format="mahimahi", uplink_log=str(up),
    )

    async def send_through() -> None:
        port = await emu.start()
        # Idle first: the opportunities before the first arrival must be logged before it
        # (mm-throughput-graph's duration starts at the first line).
        await asyncio.sleep(0.3)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            for _ in range(30):
                client.sendto(b"x" * 1000, ("127.0.0.1", port))
            await asyncio.sleep(0.2)
        await emu.close()

    asyncio.run(send_through())
    assert down.read_text().startswith("# mahimahi mm-link (downlink) [12mbit] > ")
    result = analyze_file(up)["up"]
    assert result["arrivals"] == 30 and result["departures"] + result["drops"]["link"] == 30
    assert result["capacity_mbps"] == pytest.approx(6.0, rel=0.05)
    with pytest.raises(UserError, match="--uplink-log is for --log-format mahimahi"):
        Emulator.from_settings(upstream="127.0.0.1:9", log=str(down), uplink_log=str(up))


def test_parse_reads_the_link_name() -> None:
    data = parse_mahimahi(DATA / "mm-link-small.log")
    assert data.link == "downlink" and data.base_timestamp == 1000 and data.dropped_packets == 1

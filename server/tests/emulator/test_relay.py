"""Relay plumbing on real sockets (no timing assertions)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from pccstream.emulator.analyze import parse_log
from pccstream.emulator.lateness import parse_summary
from pccstream.emulator.relay import Emulator, EmulatorProcess, parse_hostport
from pccstream.emulator.scenario import load_scenario
from pccstream.errors import UserError


def test_timeline_changes_at_start_apply_before_traffic() -> None:
    async def go() -> None:
        sc = load_scenario("changing-5s")
        first = next(iter(sc.changes(seed=4)))
        emu = Emulator(sc, ("127.0.0.1", 0), ("127.0.0.1", 9), seed=4)
        await emu.start()
        try:
            st = emu.status()
            assert first.rate_bps is not None and first.delay_ms is not None
            assert st["down"].delay_ms == pytest.approx(first.delay_ms)
            assert st["up"].delay_ms == pytest.approx(first.delay_ms)
            assert st["down"].capacity_mbps is not None
            # capacity over the last second of a schedule that just started is partial, so
            # compare the installed trace instead
            assert emu.down is not None and emu.down.trace is not None
            assert emu.down.trace.average_bps() == pytest.approx(first.rate_bps, rel=1e-6)
        finally:
            await emu.close()

    asyncio.run(go())


def test_from_settings_overrides_scenario(tmp_path) -> None:
    emu = Emulator.from_settings(upstream="127.0.0.1:9", scenario="satellite", delay_ms=5,
                                 queue="10pkts", log=str(tmp_path / "x.log"))
    assert emu.scenario.down.delay_ms == 5 and emu.scenario.down.queue == "10pkts"
    assert emu.scenario.down.rate_bps == 12e6  # from the scenario


def test_parse_hostport() -> None:
    assert parse_hostport("127.0.0.1:4433", "x") == ("127.0.0.1", 4433)
    assert parse_hostport("[::1]:5", "x") == ("::1", 5)
    with pytest.raises(UserError, match="--listen"):
        parse_hostport("4433", "--listen")


def test_emulator_process_relays_and_logs(tmp_path) -> None:
    async def go() -> None:
        server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        server.bind(("127.0.0.1", 0))
        server.settimeout(5)
        log = tmp_path / "p.log"
        emu = EmulatorProcess(upstream=f"127.0.0.1:{server.getsockname()[1]}", up="10mbit",
                              delay_ms=1, log=str(log))
        port = await emu.start()
        client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            client.sendto(b"ping", ("127.0.0.1", port))
            data, _ = await asyncio.get_running_loop().run_in_executor(
                None, server.recvfrom, 2048
            )
            assert data == b"ping"
        finally:
            await emu.close()
            client.close()
            server.close()
        text = log.read_text()
        assert " u + 32\n" in text  # 4-byte payload + 28 bytes of IPv4/UDP headers
        assert " u - 32 " in text
        # The log ends with the emulator's timer lateness, which the analysis reads back.
        stalls = parse_summary(parse_log(log).header)
        assert stalls is not None and stalls["wakes"] >= 1
        assert set(stalls) == {"wakes", "p99_ms", "max_ms", "over_1ms", "over_5ms",
                               "over_10ms", "stalled_share"}

    asyncio.run(go())

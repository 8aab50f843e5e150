"""The local coturn: starts, answers STUN, demands credentials, and works behind the emulator."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import time
from pathlib import Path

import pytest

from pccstream.emulator.relay import EmulatorProcess
from pccstream.errors import ToolMissingError, UserError
from pccstream.webrtc import turn as turn_module
from pccstream.webrtc.turn import (
    REALM,
    TurnServer,
    is_binding_success,
    stun_binding_request,
    turnserver_path,
)


def _require_coturn() -> None:
    # The bootstrap installs coturn; the test suite must run these tests, never skip them.
    try:
        turnserver_path()
    except ToolMissingError as exc:
        pytest.fail(f"{exc}")


def _exchange(port: int, message: bytes, timeout_s: float = 2.0) -> tuple[bytes, float]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout_s)
        started = time.monotonic()
        sock.sendto(message, ("127.0.0.1", port))
        data = sock.recv(2048)
        return data, time.monotonic() - started


def _allocate_request(txid: bytes) -> bytes:
    # TURN Allocate with REQUESTED-TRANSPORT = UDP (17), no credentials.
    attribute = struct.pack(">HHB3x", 0x0019, 4, 17)
    return struct.pack(">HHI", 0x0003, len(attribute), 0x2112A442) + txid + attribute


def test_webrtc_turn_answers_stun_and_demands_credentials(tmp_path: Path) -> None:
    _require_coturn()

    async def scenario() -> None:
        async with TurnServer(log_path=tmp_path / "turn.log") as turn:
            assert turn.url == f"turn:127.0.0.1:{turn.port}?transport=udp"
            assert turn.ice_server() == {
                "urls": turn.url,
                "username": "pccstream",
                "credential": "pccstream",
            }
            txid = os.urandom(12)
            data, _ = await asyncio.to_thread(_exchange, turn.port, stun_binding_request(txid))
            assert is_binding_success(data, txid)
            # An Allocate without credentials: 401 with the realm (long-term credentials).
            data, _ = await asyncio.to_thread(_exchange, turn.port, _allocate_request(txid))
            kind = struct.unpack_from(">H", data)[0]
            assert kind == 0x0113  # Allocate error response
            assert b"\x04\x01" in data[20:]  # ERROR-CODE class 4, number 01: 401
            assert REALM.encode() in data
        assert turn.proc is None

    asyncio.run(scenario())


def test_webrtc_turn_behind_the_emulator_sees_its_delay() -> None:
    _require_coturn()

    async def scenario() -> None:
        async with TurnServer() as turn:
            emulator = EmulatorProcess(upstream=f"127.0.0.1:{turn.port}", delay_ms=20)
            port = await emulator.start()
            try:
                txid = os.urandom(12)
                data, rtt = await asyncio.to_thread(_exchange, port, stun_binding_request(txid))
            finally:
                await emulator.close()
            assert is_binding_success(data, txid)
            assert rtt >= 0.040  # 20 ms each way

    asyncio.run(scenario())


def test_webrtc_turn_missing_binary_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_module.shutil, "which", lambda name: None)
    monkeypatch.setattr(turn_module, "DEBIAN_TURNSERVER", Path("/nonexistent/turnserver"))
    with pytest.raises(ToolMissingError, match=r"run ./infra/bootstrap.sh"):
        asyncio.run(TurnServer().start())


def test_webrtc_turn_port_in_use_is_reported() -> None:
    _require_coturn()

    async def scenario() -> None:
        async with TurnServer() as first:
            with pytest.raises(UserError, match="already in use"):
                await TurnServer(port=first.port).start(timeout_s=3)

    asyncio.run(scenario())

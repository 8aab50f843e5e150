"""One real WebRTC call in headless Chromium through coturn and the emulator (~25 s)."""

from __future__ import annotations

import asyncio

import pytest

from pccstream.errors import ToolMissingError
from pccstream.harness.browser import chromium_path
from pccstream.webrtc.call import CallSettings, webrtc_call
from pccstream.webrtc.cli import summary
from pccstream.webrtc.turn import turnserver_path
from tests.checkout import REPO_ROOT

MEDIA = REPO_ROOT / "media" / "default"


def test_webrtc_call_through_the_emulator() -> None:
    # The bootstrap installs all of these; CI must run this test, never skip it.
    try:
        chromium_path()
        turnserver_path()
    except ToolMissingError as exc:
        pytest.fail(str(exc))
    receiver_page = REPO_ROOT / "web" / "dist" / "webrtc-recv.html"
    assert receiver_page.is_file(), "build the web app (web/dist)"
    assert (MEDIA / "manifest.json").is_file(), "media/default is missing (infra/bootstrap.sh)"
    settings = CallSettings(
        media=MEDIA,
        duration_s=8,
        bitrate_bps=1_000_000,
        emulator={"down": "6mbit", "up": "6mbit", "delay_ms": 20, "queue": "100kB"},
        windows=[("all", 0, 600)],
    )
    result = asyncio.run(webrtc_call(settings))
    print(summary(result))
    r, s = result["receiver"], result["sender"]
    assert r["error"] is None and s["error"] is None
    assert r["mode"] == "webrtc" and r["state"] == "playing"
    assert r["playSeconds"] >= 8
    assert r["framesShown"] > 60 and r["framesDecoded"] > 60
    # Glass-to-glass latency includes the emulated 20 ms one-way delay.
    assert r["latencyP50Ms"] >= 20
    assert r["frameHeight"] > 0 and r["jitterBufferDelayMs"] is not None
    assert 0 <= r["bufferingRatio"] <= 1
    assert r["roundTripTimeMs"] >= 40  # 20 ms each way through the emulator
    assert s["state"] == "sending" and s["maxBitrateBps"] == 1_000_000
    assert s["targetBitrateBps"] is not None and s["targetBitrateBps"] <= 1_000_000
    assert result["windows"]["all"]["frames"] >= r["framesShown"]  # read a moment later
    assert len(result["samples"]) >= 7

"""One WebRTC call in headless Chromium: sender page -> coturn -> emulator -> receiver page.

`run_call` drives the two pages of an already running setup (server, coturn, emulator) and
returns the receiver's and sender's `window.pccstream.metrics()` after the call has played
for `duration_s`, one light sample a second, and latency figures per time window.
`webrtc_call` starts the whole setup itself (what `pccstream webrtc call` runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pccstream.contracts import page_query
from pccstream.emulator.relay import EmulatorProcess
from pccstream.errors import ToolMissingError, UserError
from pccstream.harness.browser import CHROMIUM_ARGS, chromium_path
from pccstream.harness.processes import ServerProcess
from pccstream.webrtc.turn import TurnServer, turn_url

# Relay candidates only need this when the machine has no interface but loopback (a network
# namespace, some CI sandboxes): without it Chromium then gathers no candidate at all.
WEBRTC_ARGS = ["--allow-loopback-in-peer-connection"]

LIGHT_SAMPLE = """() => { const m = window.pccstream.metrics();
  return {t_ms: performance.timeOrigin + performance.now(), state: m.state,
          latency_last_ms: m.latencyLastMs, fps: m.framesPerSecond, width: m.frameWidth,
          height: m.frameHeight, receive_bps: m.receiveBitrateBps, freezes: m.freezeCount,
          freeze_s: m.totalFreezesDurationS, jitter_buffer_ms: m.jitterBufferDelayMs,
          rtt_ms: m.roundTripTimeMs}; }"""
SENDER_SAMPLE = """() => { const m = window.pccstream.metrics();
  return {target_bps: m.targetBitrateBps, send_bps: m.sendBitrateBps,
          limitation: m.qualityLimitationReason, width: m.frameWidth, height: m.frameHeight}; }"""
STATE = """() => { const m = window.pccstream ? window.pccstream.metrics() : null;
  return m ? [m.state, m.error] : ['loading', null]; }"""


class CallFailed(UserError):
    """The call did not start or broke off (the message has the page's error)."""


@dataclass(frozen=True)
class CallPages:
    """Where the pages are and what they are told (web/README.md, "WebRTC arm")."""

    page_url: str  # the server's web app, e.g. http://127.0.0.1:8080/
    sender_turn: str  # turn:127.0.0.1:TURN_PORT?transport=udp (coturn itself)
    receiver_turn: str  # turn:127.0.0.1:EMULATOR_PORT?transport=udp
    room: str = "call"
    bitrate_bps: int = 2_500_000
    rendition: str | None = None
    codec: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def sender_url(self) -> str:
        query: dict[str, str] = {"room": self.room, "turn": self.sender_turn}
        query["bitrate"] = str(self.bitrate_bps)
        if self.rendition is not None:
            query["rendition"] = self.rendition
        if self.codec is not None:
            query["codec"] = self.codec
        query.update(self.extra)
        page = f"{self.page_url.rstrip('/')}/webrtc-send.html"
        return f"{page}?{page_query('webrtc_sender', query.items())}"

    def receiver_url(self) -> str:
        query = {"room": self.room, "turn": self.receiver_turn}
        page = f"{self.page_url.rstrip('/')}/webrtc-recv.html"
        return f"{page}?{page_query('webrtc_receiver', query.items())}"


@dataclass(frozen=True)
class Window:
    """A named stretch of wall-clock time (seconds since the Unix epoch) to report latency for."""

    name: str
    start_s: float
    end_s: float


class WebrtcBrowser:
    """Debian's Chromium with the WebRTC flag; one context per page."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self.browser: Any = None

    async def start(self) -> None:
        try:
            from playwright.async_api import async_playwright
        except ImportError:
            raise ToolMissingError("Python Playwright is missing: pip install playwright") from None
        path = chromium_path()
        self._playwright = await async_playwright().start()
        try:
            self.browser = await self._playwright.chromium.launch(
                executable_path=path, headless=True,
                args=list(dict.fromkeys([*CHROMIUM_ARGS, *WEBRTC_ARGS])),
            )
        except Exception as exc:  # Playwright raises its own Error types
            await self.close()
            raise UserError(f"{path}: Chromium did not start: {exc}") from None

    async def new_page(self, url: str) -> Any:
        assert self.browser is not None
        context = await self.browser.new_context(viewport={"width": 1000, "height": 700})
        page = await context.new_page()
        await page.goto(url, wait_until="load")
        return page

    async def close(self) -> None:
        if self.browser is not None:
            with contextlib.suppress(Exception):
                await self.browser.close()
            self.browser = None
        if self._playwright is not None:
            with contextlib.suppress(Exception):
                await self._playwright.stop()
            self._playwright = None


class PageOpener(Protocol):
    """What `run_call` needs of a browser: `WebrtcBrowser`, or the A/B runner's `Browser`
    (launched with WEBRTC_ARGS where loopback is the only interface)."""

    async def new_page(self, url: str) -> Any: ...


async def _state(page: Any) -> tuple[str, str | None]:
    try:
        state, error = await page.evaluate(STATE)
    except Exception:  # still navigating: no execution context yet
        return "loading", None
    return str(state), error


async def run_call(
    browser: PageOpener,
    pages: CallPages,
    duration_s: float,
    *,
    windows: Sequence[Window] = (),
    connect_timeout_s: float = 30.0,
    sample_every_s: float = 1.0,
) -> dict[str, Any]:
    """Play one call for `duration_s` seconds from its first frame; the figures as a dict."""
    receiver = await browser.new_page(pages.receiver_url())
    sender = await browser.new_page(pages.sender_url())
    try:
        deadline = time.monotonic() + connect_timeout_s
        while True:
            for name, page in (("receiver", receiver), ("sender", sender)):
                state, error = await _state(page)
                if state == "failed":
                    raise CallFailed(f"WebRTC {name} failed: {error}")
            if (await _state(receiver))[0] == "playing":
                break
            if time.monotonic() > deadline:
                states = [(await _state(p))[0] for p in (receiver, sender)]
                raise CallFailed(
                    f"the call did not start within {connect_timeout_s:g} s "
                    f"(receiver {states[0]}, sender {states[1]})"
                )
            await asyncio.sleep(0.1)
        playing_at = time.time()
        samples: list[dict[str, Any]] = []
        end = time.monotonic() + duration_s
        while time.monotonic() < end:
            await asyncio.sleep(min(sample_every_s, max(0.0, end - time.monotonic())))
            sample = await receiver.evaluate(LIGHT_SAMPLE)
            sample["sender"] = await sender.evaluate(SENDER_SAMPLE)
            samples.append(sample)
        receiver_metrics = await receiver.evaluate("() => window.pccstream.metrics()")
        sender_metrics = await sender.evaluate("() => window.pccstream.metrics()")
        figures = {}
        for w in windows:
            figures[w.name] = await receiver.evaluate(
                "([a, b]) => window.pccstream.latencyWindow(a, b)",
                [w.start_s * 1000, w.end_s * 1000],
            )
        return {
            "playing_at_s": playing_at,
            "duration_s": duration_s,
            "receiver": receiver_metrics,
            "sender": sender_metrics,
            "windows": figures,
            "samples": samples,
        }
    finally:
        for page in (sender, receiver):
            with contextlib.suppress(Exception):
                await page.context.close()


@dataclass
class CallSettings:
    """Everything `webrtc_call` starts; emulator settings as in `EmulatorProcess`."""

    media: Path
    live_media: Path | None = None
    duration_s: float = 20.0
    bitrate_bps: int = 2_500_000
    rendition: str | None = None
    codec: str | None = None
    emulator: dict[str, Any] = field(default_factory=dict)  # scenario, down, up, delay_ms, ...
    emulate: bool = True  # False: the receiver talks to coturn directly (no emulated link)
    # Windows relative to the emulator's start (its scenario timeline's t = 0), seconds.
    windows: Sequence[tuple[str, float, float]] = ()


async def webrtc_call(settings: CallSettings) -> dict[str, Any]:
    """Server + coturn + emulator + Chromium for one call; everything stopped afterwards."""
    extra = ["--live-media", str(settings.live_media)] if settings.live_media else []
    server = ServerProcess(settings.media, extra_args=extra)
    turn = TurnServer()
    emulator: EmulatorProcess | None = None
    browser = WebrtcBrowser()
    try:
        info = await server.start()
        turn_port = await turn.start()
        receiver_turn = turn.url
        emulator_started = time.time()
        if settings.emulate:
            emulator = EmulatorProcess(upstream=f"127.0.0.1:{turn_port}", **settings.emulator)
            port = await emulator.start()
            emulator_started = time.time()
            receiver_turn = turn_url(port)
        await browser.start()
        pages = CallPages(
            page_url=info["page_url"],
            sender_turn=turn.url,
            receiver_turn=receiver_turn,
            bitrate_bps=settings.bitrate_bps,
            rendition=settings.rendition,
            codec=settings.codec,
        )
        windows = [
            Window(n, emulator_started + a, emulator_started + b) for n, a, b in settings.windows
        ]
        result = await run_call(browser, pages, settings.duration_s, windows=windows)
        result["emulator_started_s"] = emulator_started
        result["emulator"] = dict(settings.emulator) if settings.emulate else None
        return result
    finally:
        await browser.close()
        if emulator is not None:
            await emulator.close()
        await turn.close()
        await server.close()

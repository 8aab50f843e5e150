"""Headless Chromium through Python Playwright, with Debian's Chromium (never downloaded)."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

from pccstream.errors import ToolMissingError, UserError

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
    # The WebRTC arm's relay candidates on a loopback-only machine (docs/webrtc.md).
    "--allow-loopback-in-peer-connection",
]


def chromium_path() -> str:
    """`PCCSTREAM_CHROMIUM`, else /usr/bin/chromium, else `chromium` on PATH."""
    candidates = [os.environ.get("PCCSTREAM_CHROMIUM"), "/usr/bin/chromium"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    raise ToolMissingError(
        "Chromium not found (looked at $PCCSTREAM_CHROMIUM, /usr/bin/chromium and PATH); "
        "install Debian's chromium package"
    )


class Browser:
    """One Chromium for a whole experiment; every viewer of every run gets a fresh context
    (no shared cache, cookies or QUIC state). Relaunched if it died."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None
        self.version = ""

    async def start(self) -> None:
        try:
            from playwright.async_api import async_playwright
        except ImportError:
            raise ToolMissingError(
                "Python Playwright is missing: pip install playwright "
                "(it drives the system Chromium; no browser download is needed)"
            ) from None
        path = chromium_path()
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        try:
            self._browser = await self._playwright.chromium.launch(
                executable_path=path, headless=True, args=CHROMIUM_ARGS
            )
        except Exception as exc:  # Playwright raises its own Error types
            raise UserError(f"{path}: Chromium did not start: {exc}") from None
        self.version = self._browser.version

    async def new_page(self, url: str, timeout_s: float = 30.0) -> Any:
        if self._browser is None or not self._browser.is_connected():
            await self.start()
        assert self._browser is not None
        context = await self._browser.new_context()
        page = await context.new_page()
        await page.goto(url, timeout=timeout_s * 1000, wait_until="commit")
        return page

    async def close(self) -> None:
        if self._browser is not None:
            with contextlib.suppress(Exception):  # already gone
                await self._browser.close()
            self._browser = None
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None


HAS_API = "() => typeof window.pccstream !== 'undefined'"
METRICS = "() => window.pccstream.metrics()"
TELEMETRY = "() => window.pccstream.telemetry()"
VERSION = "() => window.pccstream.version"


async def evaluate(page: Any, script: str) -> Any:
    """`page.evaluate`, or None when the page has no player API (yet)."""
    try:
        if not await page.evaluate(HAS_API):
            return None
        return await page.evaluate(script)
    except Exception:
        return None


async def close_page(page: Any) -> None:
    with contextlib.suppress(Exception):
        await page.context.close()

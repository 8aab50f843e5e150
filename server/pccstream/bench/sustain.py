"""`pccstream bench sustain`: which fixed video bitrates this machine can stream and play.

Per bitrate: a fresh server (cubic, a fast controller that does not limit the rate), a fresh
emulator with a link of `headroom` x the bitrate, 10 ms RTT and a big queue, and one headless
Chromium viewer playing the fixed-bitrate rendition for S seconds. The link never limits the
video, so what fails is the machine: the browser decoding, the server or the emulator running
out of CPU. `direct=True` leaves the emulator out (the player dials the server), which
isolates the browser's decoding cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pccstream.cli_conventions import parse_kbps
from pccstream.contracts import metric, page_query
from pccstream.emulator.analyze import analyze_file
from pccstream.emulator.relay import EmulatorProcess
from pccstream.errors import Interrupted, UserError
from pccstream.harness import browser as br
from pccstream.harness.cpu import descendants, process_cpu_seconds
from pccstream.harness.processes import ServerProcess, endpoint_priority

DEFAULT_BITRATES_KBPS = (15000, 30000, 50000, 95000)
# Verdict thresholds: the wire carries the video, the player shows it, and no process is
# pinned at a full core (then it is the bottleneck even if the numbers still look fine).
MIN_THROUGHPUT_FRACTION = 0.95
MAX_DROPPED_FRACTION = 0.01
MAX_CORE_FRACTION = 0.95

SAMPLE_S = 0.5
MIN_QUEUE_BYTES = 100_000

QUALITY = """() => { const v = document.querySelector('video');
  if (!v || !v.getVideoPlaybackQuality) return null;
  const q = v.getVideoPlaybackQuality();
  return {dropped: q.droppedVideoFrames, total: q.totalVideoFrames,
          width: v.videoWidth, height: v.videoHeight}; }"""


@dataclass(frozen=True)
class SustainSettings:
    bitrates_kbps: tuple[int, ...] = DEFAULT_BITRATES_KBPS
    duration_s: float = 20.0
    cc: str = "cubic"
    cc_params: tuple[tuple[str, str], ...] = ()
    headroom: float = 1.1
    rtt_ms: float = 10.0
    # Queue = this much time at the link rate (10 BDP at 10 ms RTT): deep enough that cubic
    # never loses for lack of buffer, so loss recovery does not hide the machine's limits.
    queue_ms: float = 100.0
    buffer_s: float = 10.0
    direct: bool = False

    def link_kbps(self, bitrate_kbps: int) -> float:
        return self.headroom * bitrate_kbps

    def queue_bytes(self, bitrate_kbps: int) -> int:
        by_time = self.link_kbps(bitrate_kbps) * 1000 / 8 * self.queue_ms / 1000
        return max(MIN_QUEUE_BYTES, round(by_time))


def parse_bitrates(text: str, flag: str = "--bitrates") -> tuple[int, ...]:
    """`15000,50M` (kbit/s, k/M suffixes accepted) → (15000, 50000); errors name the item."""
    items = [item.strip() for item in text.split(",")]
    if not text.strip():
        raise UserError(f"{flag} '': expected kbit/s like 15000,50000")
    out: list[int] = []
    for position, item in enumerate(items, start=1):
        try:
            value = parse_kbps(item, flag)
        except UserError:
            raise UserError(
                f"{flag} {text!r}: item {position} {item!r} is not a whole number of kbit/s "
                "(k/M suffixes accepted, e.g. 15000 or 15M)"
            ) from None
        if not 100 <= value <= 100_000:
            raise UserError(
                f"{flag} {text!r}: item {position} {value} is outside 100..100000 kbit/s"
            )
        if value in out:
            raise UserError(f"{flag} {text!r}: item {position} {value} is listed twice")
        out.append(value)
    return tuple(out)


def verdict(
    bitrate_kbps: float,
    throughput_kbps: float | None,
    dropped_frames: int | None,
    total_frames: int | None,
    core_fractions: Mapping[str, float],
) -> tuple[str, list[str]]:
    """("sustained", []) when throughput >= 0.95 x bitrate, dropped frames < 1 % of the
    frames and every process < 95 % of a core; else ("not sustained", reasons)."""
    reasons: list[str] = []
    if throughput_kbps is None:
        reasons.append("no throughput measured")
    elif throughput_kbps < MIN_THROUGHPUT_FRACTION * bitrate_kbps:
        reasons.append(
            f"throughput {throughput_kbps:.0f} kbit/s < {MIN_THROUGHPUT_FRACTION:g} x "
            f"{bitrate_kbps:g} kbit/s"
        )
    if dropped_frames is None or not total_frames:
        reasons.append("no frames decoded")
    elif dropped_frames / total_frames >= MAX_DROPPED_FRACTION:
        reasons.append(
            f"dropped {dropped_frames} of {total_frames} frames "
            f"({100 * dropped_frames / total_frames:.1f} % >= {100 * MAX_DROPPED_FRACTION:g} %)"
        )
    for name, fraction in sorted(core_fractions.items()):
        if fraction >= MAX_CORE_FRACTION:
            reasons.append(f"{name} used {100 * fraction:.0f} % of a core")
    return ("sustained" if not reasons else "not sustained"), reasons


# -- CPU accounting (per process: the busiest browser process matters here) -----------------


def browser_pids() -> list[int]:
    """Our Chromium processes: descendants of this process whose executable is Chromium's
    (by name: Debian's /usr/bin/chromium is a shell script exec'ing /usr/lib/chromium/chromium;
    Playwright's node driver sits in between and is left out)."""
    out = []
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            if Path(os.readlink(f"/proc/{pid}/exe")).name.startswith(("chrom", "headless_shell")):
                out.append(pid)
    return out


def cpu_snapshot(pids: Iterable[int]) -> dict[int, float]:
    return {pid: s for pid in pids if (s := process_cpu_seconds(pid)) is not None}


def cpu_delta(before: Mapping[int, float], after: Mapping[int, float]) -> dict[int, float]:
    """CPU seconds per process between two snapshots; a process born in between counts
    from 0. A process that exited in between is missing (its time is not measurable)."""
    return {pid: max(0.0, end - before.get(pid, 0.0)) for pid, end in after.items()}


# -- the benchmark ----------------------------------------------------------------------------


def player_url(page_url: str, quic_port: int, settings: SustainSettings, bitrate: int) -> str:
    params = {
        "server": f"https://127.0.0.1:{quic_port}/stream",
        "cc": settings.cc,
        **{f"cc.{key}": value for key, value in settings.cc_params},
        "mode": "fixed",
        "bitrate": str(bitrate),
        "buffer": f"{settings.buffer_s:g}",
        # The dashboard's charts cost CPU the decoding needs (as in `pccstream ab`).
        "dashboard": "0",
    }
    return f"{page_url.split('?')[0]}?{page_query('player', params.items())}"


async def run_rate(
    browser: br.Browser, media: Path, settings: SustainSettings, bitrate: int, log_dir: Path
) -> dict[str, Any]:
    server = ServerProcess(media, cc=settings.cc)
    emulator: EmulatorProcess | None = None
    log = log_dir / f"sustain-{bitrate}k.log"
    page: Any = None
    link_kbps = settings.link_kbps(bitrate)
    try:
        with endpoint_priority():  # as in `pccstream ab`: the server inherits it
            info = await server.start()
        port = info["quic_port"]
        if not settings.direct:
            emulator = EmulatorProcess(
                upstream=f"127.0.0.1:{port}",
                down=f"{link_kbps:.0f}kbit",
                up=f"{link_kbps:.0f}kbit",
                delay_ms=f"{settings.rtt_ms / 2:g}",
                queue=f"{settings.queue_bytes(bitrate)}B",
                log=str(log),
                realtime=True,  # exact link timing while browser and server load the cores
            )
            port = await emulator.start()
        pids = {"server": server.pid}
        if emulator is not None and emulator.proc is not None:
            pids["emulator"] = emulator.proc.pid
        before = cpu_snapshot([*pids.values(), *browser_pids()])
        started = time.monotonic()
        page = await browser.new_page(player_url(info["page_url"], port, settings, bitrate))
        end = started + settings.duration_s
        while (now := time.monotonic()) < end:
            await asyncio.sleep(min(SAMPLE_S, end - now))
            metrics = await br.evaluate(page, br.METRICS)
            if metrics and (metrics.get("ended") or metrics.get("error")):
                break
        after = cpu_snapshot([*pids.values(), *browser_pids()])
        wall = time.monotonic() - started
        load = os.getloadavg()
        metrics = await br.evaluate(page, br.METRICS) or {}
        quality = await _quality(page)
    finally:
        if page is not None:
            await br.close_page(page)
        if emulator is not None:
            await emulator.close()
        await server.close()
    return summarize_rate(
        settings, bitrate, wall, cpu_delta(before, after), pids, metrics, quality, load,
        analyze_file(log)["down"] if emulator is not None and log.exists() else None,
    )


async def _quality(page: Any) -> dict[str, Any] | None:
    try:
        result = await page.evaluate(QUALITY)
    except Exception:  # Playwright's own error types: the page is gone
        return None
    return result if isinstance(result, dict) else None


def summarize_rate(
    settings: SustainSettings,
    bitrate: int,
    wall_s: float,
    cpu: Mapping[int, float],
    pids: Mapping[str, int],
    metrics: Mapping[str, Any],
    quality: Mapping[str, Any] | None,
    load: tuple[float, float, float],
    link: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """One rate's JSON record and verdict."""
    named = {name: cpu.get(pid, 0.0) for name, pid in pids.items()}
    browser = {pid: s for pid, s in cpu.items() if pid not in pids.values()}
    shares = {name: s / wall_s for name, s in named.items()}
    browser_max = max(browser.values(), default=0.0) / wall_s
    segments = metrics.get(metric("segments")) or []
    received = sum(int(s.get("bytes") or 0) for s in segments)
    goodput_kbps = received * 8 / 1000 / wall_s
    wire_kbps = None if link is None else float(link["throughput_mbps"]) * 1000
    throughput_kbps = wire_kbps if wire_kbps is not None else goodput_kbps
    dropped = quality.get("dropped") if quality else None
    total = quality.get("total") if quality else None
    verdict_text, reasons = verdict(
        bitrate, throughput_kbps, dropped, total, {**shares, "browser process": browser_max}
    )
    return {
        "bitrate_kbps": bitrate,
        "link_kbps": None if settings.direct else round(settings.link_kbps(bitrate)),
        "wall_s": round(wall_s, 2),
        "throughput_kbps": round(throughput_kbps),
        "wire_throughput_kbps": None if wire_kbps is None else round(wire_kbps),
        "player_goodput_kbps": round(goodput_kbps),
        "cpu_core_fraction": {
            "browser_tree": round(sum(browser.values()) / wall_s, 3),
            "browser_max_process": round(browser_max, 3),
            "browser_processes": len(browser),
            **{name: round(share, 3) for name, share in shares.items()},
        },
        "load_average": [round(x, 2) for x in load],
        "dropped_frames": dropped,
        "total_frames": total,
        "dropped_fraction": round(dropped / total, 4) if dropped is not None and total else None,
        "video_size": f"{quality['width']}x{quality['height']}" if quality else None,
        "buffering_ratio": metrics.get(metric("bufferingRatio")),
        "startup_delay_ms": metrics.get(metric("startupDelayMs")),
        "play_seconds": metrics.get(metric("playSeconds")),
        "player_error": metrics.get(metric("error")) or None,
        "verdict": verdict_text,
        "reasons": reasons,
    }


async def run_sustain(
    settings: SustainSettings, media: Path, progress: Callable[[str], None]
) -> dict[str, Any]:
    browser = br.Browser()
    await browser.start()
    rates = []
    try:
        with tempfile.TemporaryDirectory(prefix="pccstream-sustain-") as tmp:
            for bitrate in settings.bitrates_kbps:
                progress(f"sustain: {bitrate} kbit/s for {settings.duration_s:g} s")
                record = await run_rate(browser, media, settings, bitrate, Path(tmp))
                progress(f"sustain: {bitrate} kbit/s: {record['verdict']}"
                         + (f" ({'; '.join(record['reasons'])})" if record["reasons"] else ""))
                rates.append(record)
    finally:
        await browser.close()
    return {
        "benchmark": "sustain",
        "settings": {
            "duration_s": settings.duration_s,
            "cc": settings.cc,
            "cc_params": dict(settings.cc_params),
            "headroom": settings.headroom,
            "rtt_ms": None if settings.direct else settings.rtt_ms,
            "queue_ms": None if settings.direct else settings.queue_ms,
            "direct": settings.direct,
            "buffer_s": settings.buffer_s,
            "media": str(media),
        },
        "machine": {"cpus": os.cpu_count(), "chromium": browser.version},
        "rates": rates,
    }


def run_sustain_sync(
    settings: SustainSettings, media: Path, progress: Callable[[str], None]
) -> dict[str, Any]:
    try:
        return asyncio.run(run_sustain(settings, media, progress))
    except KeyboardInterrupt:
        raise Interrupted("no result (results are printed at the end)") from None

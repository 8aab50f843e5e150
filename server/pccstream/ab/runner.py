"""One A/B run: a fresh emulator on the scenario (the block's seed), a fresh server with the
arm's controller, and K headless Chromium viewers playing through the emulator for S seconds.

The run lasts S seconds from the moment the viewers' pages are opened; a viewer whose media
ends earlier is recorded with `ended = true`. Everything needed to reproduce and analyse the
run is returned as one record; the experiment loop stores it in one transaction.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import platform
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pccstream import __version__
from pccstream.ab.design import NO_EMULATOR, Arm, Design, Slot
from pccstream.contracts import metric, page_query
from pccstream.emulator.analyze import DirectionLog, analyze, parse_log
from pccstream.emulator.lateness import parse_summary
from pccstream.emulator.relay import EmulatorProcess
from pccstream.emulator.scenario import load_scenario
from pccstream.errors import UserError
from pccstream.harness import browser as br
from pccstream.harness import cpu
from pccstream.harness.processes import ServerProcess, endpoint_priority
from pccstream.paths import PACKAGE_DIR, checkout_root
from pccstream.webrtc.call import CallFailed, CallPages, run_call
from pccstream.webrtc.turn import TurnServer, turn_url

SAMPLE_S = 0.5
LINK_BIN_MS = 500

# A light poll of each viewer for the example time series (the full metrics come at the end).
POLL = """() => { const m = window.pccstream.metrics();
  return {t_ms: performance.now(), state: m.state, buffer_s: m.bufferSeconds,
          current_time_s: m.currentTime, stall_count: m.stallCount,
          stall_seconds: m.stallSeconds, ended: m.ended, error: m.error,
          latency_ms: m.latencyLastMs ?? null, playout_ms: m.playoutDelayMs ?? null,
          freeze_count: m.freezeCount ?? null,
          frame_height: m.frameHeight ?? null}; }"""


class RunFailed(Exception):
    """The run could not measure anything (infrastructure failure); it may be retried."""


class Runner(Protocol):
    """What the experiment loop needs; unit tests inject a fake."""

    async def run(self, design: Design, slot: Slot) -> dict[str, Any]: ...


def player_query(design: Design, arm: Arm, emulator_port: int) -> str:
    """The page's query; `emulator_port` is the server's own QUIC port with `--scenario none`."""
    params: list[tuple[str, str]] = [
        ("server", f"https://127.0.0.1:{emulator_port}/stream"),
        ("cc", arm.cc),
        *((f"cc.{key}", value) for key, value in arm.params),
        ("mode", design.mode),
        # Charts cost CPU that the runs' video decoding needs; telemetry is still recorded.
        ("dashboard", "0"),
    ]
    if design.mode == "live":
        params.append(("latency", str(design.target_latency_ms)))
        if design.live_abr:
            params.append(("abr", "1"))
    else:
        params.append(("buffer", f"{design.buffer_s:g}"))
    if design.mode in ("fixed", "live"):
        params.append(("bitrate", str(design.bitrate_kbps)))
    # The arm's own player parameters win over the design's `--player` ones.
    arm_keys = {key for key, _ in arm.player}
    params.extend(pair for pair in design.player_params if pair[0] not in arm_keys)
    params.extend(arm.player)
    return page_query("player", params)


def summarize_viewers(viewers: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
    """Per-run player scalars: the mean over viewers (startup over viewers that started; the
    event-loop lag maximum is the worst viewer's)."""

    def present(key: str) -> list[float]:
        key = metric(key)
        return [v[key] for v in viewers if v and isinstance(v.get(key), int | float)]

    def mean(key: str) -> float | None:
        values = present(key)
        return float(np.mean(values)) if values else None

    def worst(key: str) -> float | None:
        values = present(key)
        return float(max(values)) if values else None

    return {
        "buffering_ratio": mean("bufferingRatio"),
        "startup_delay_ms": mean("startupDelayMs"),
        "stall_count": mean("stallCount"),
        "stall_seconds": mean("stallSeconds"),
        "play_seconds": mean("playSeconds"),
        "mean_bitrate_kbps": mean("meanBitrateKbps"),
        "bitrate_switches": mean("bitrateSwitches"),
        "ended": int(bool(viewers) and all(v and v.get(metric("ended")) for v in viewers)),
        "player_errors": sum(1 for v in viewers if not v or v.get(metric("error"))),
        "latency_p50_ms": mean("latencyP50Ms"),
        "latency_p95_ms": mean("latencyP95Ms"),
        "frames_skipped": mean("framesSkipped"),
        # WebRTC's freeze rule: the live player's from its shown frames, WebRTC's its own.
        "freeze_count": mean("freezeCount"),
        "buffering_ratio_with_startup": mean("bufferingRatioWithStartup"),
        "dropped_frames": mean("droppedFrames"),
        "decoded_frames": mean("decodedFrames"),
        # Dropped while stalled or just after: the network's, not the CPU's (starvation.py).
        "dropped_frames_near_stalls": mean("droppedFramesNearStalls"),
        "event_loop_lag_p95_ms": mean("eventLoopLagP95Ms"),
        "event_loop_lag_max_ms": worst("eventLoopLagMaxMs"),
    }


def link_series(dl: DirectionLog, bin_ms: int = LINK_BIN_MS) -> dict[str, list[float]]:
    """Capacity, throughput (Mbit/s) and mean queueing delay (ms) per bin, from the log."""
    if not dl.dep_t and not dl.cap_t:
        return {"t_s": [], "capacity_mbps": [], "throughput_mbps": [], "queue_delay_ms": []}
    t0 = dl.first
    nbins = int((dl.last - t0) // bin_ms) + 1

    def binned(t: Sequence[float], values: Sequence[float], reduce_sum: bool) -> np.ndarray:
        out = np.zeros(nbins)
        if not t:
            return out
        idx = ((np.asarray(t) - t0) // bin_ms).astype(np.int64).clip(0, nbins - 1)
        np.add.at(out, idx, np.asarray(values, dtype=float))
        if not reduce_sum:
            counts = np.bincount(idx, minlength=nbins)
            out = np.divide(out, counts, out=np.zeros(nbins), where=counts > 0)
        return out

    scale = 8 / (bin_ms / 1000.0) / 1e6
    return {
        "t_s": [round((i + 0.5) * bin_ms / 1000.0, 3) for i in range(nbins)],
        "capacity_mbps": [round(x, 4) for x in binned(dl.cap_t, dl.cap_b, True) * scale],
        "throughput_mbps": [round(x, 4) for x in binned(dl.dep_t, dl.dep_b, True) * scale],
        "queue_delay_ms": [round(x, 2) for x in binned(dl.dep_t, dl.dep_q, False)],
    }


def server_args(design: Design, live_media: Path | None) -> list[str]:
    """`pccstream serve` options a run of `design` needs beyond media, ports and controller."""
    args = ["--live-media", str(live_media)] if live_media is not None else []
    if design.datagram_size is not None:
        args += ["--max-datagram-size", str(design.datagram_size)]
    return args


def versions() -> dict[str, Any]:
    def dist(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    repo = checkout_root()
    commit = dirty = None
    try:
        if repo is None:
            raise OSError("installed, not a checkout")
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout
        dirty = bool(status.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return {
        "pccstream": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "python": platform.python_version(),
        "aioquic": dist("aioquic"),
        "playwright": dist("playwright"),
        "numpy": dist("numpy"),
        "platform": platform.platform(),
    }


def source_digest() -> str:
    """SHA-256 over the server's Python sources (path + content): the code a run's fresh server
    process imported, even when the working tree changed during an experiment."""
    root = PACKAGE_DIR
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def media_summary(media: Path) -> dict[str, Any]:
    manifest = json.loads((media / "manifest.json").read_text())
    return {
        "path": str(media),
        "duration_s": manifest.get("duration_s"),
        "segment_seconds": manifest.get("segment_seconds"),
        "ladder_kbps": [r["bitrate_bps"] // 1000 for r in manifest.get("renditions", [])],
    }


class BrowserRunner:
    """The real runner: one Chromium for the experiment, fresh server/emulator per run."""

    def __init__(self, media: Path, *, keep_logs: Path | None = None, live: bool = False) -> None:
        """`live`: `media` is (also) the server's live channel (`--live-media`)."""
        self.media = media
        self.live = live
        self.keep_logs = keep_logs
        self.browser = br.Browser()
        self._versions: dict[str, Any] = {}
        self._tmp = tempfile.TemporaryDirectory(prefix="pccstream-ab-")

    async def start(self) -> None:
        await self.browser.start()
        self._versions = {**versions(), "chromium": self.browser.version}

    async def close(self) -> None:
        await self.browser.close()
        self._tmp.cleanup()

    async def run(self, design: Design, slot: Slot) -> dict[str, Any]:
        arm = Arm.parse(slot.arm)
        if arm.is_webrtc:
            return await self._run_webrtc(design, slot)
        started = _RunStart.now()
        log = self._log_path(design, slot)
        server = ServerProcess(self.media, cc=arm.cc,
                               extra_args=server_args(design, self.media if self.live else None))
        emulator: EmulatorProcess | None = None
        pages: list[Any] = []
        try:
            with endpoint_priority():  # the server inherits it (see endpoint_priority)
                info = await server.start()
            if design.scenario == NO_EMULATOR:
                port = int(info["quic_port"])
            else:
                emulator = self._emulator(design, slot, info["quic_port"], log)
                port = await emulator.start()
            url = f"{info['page_url'].split('?')[0]}?{player_query(design, arm, port)}"
            setup_s = time.monotonic() - started.wall
            play_start = time.monotonic()
            pages = list(
                await asyncio.gather(*(self.browser.new_page(url) for _ in range(design.viewers)))
            )
            series: list[list[dict[str, Any]]] = [[] for _ in pages]
            end = play_start + design.duration_s
            while (now := time.monotonic()) < end:
                await asyncio.sleep(min(SAMPLE_S, end - now))
                polls = await asyncio.gather(*(br.evaluate(p, POLL) for p in pages))
                for viewer, poll in enumerate(polls):
                    if poll is not None:
                        poll["t_s"] = round(time.monotonic() - play_start, 3)
                        series[viewer].append(poll)
                if all(p and (p["ended"] or p["error"]) for p in polls):
                    break
            played_s = time.monotonic() - play_start
            viewers = list(await asyncio.gather(*(br.evaluate(p, br.METRICS) for p in pages)))
            telemetry = list(await asyncio.gather(*(br.evaluate(p, br.TELEMETRY) for p in pages)))
            web_version = await br.evaluate(pages[0], br.VERSION)
            cpu_s = started.cpu_usage(server, emulator)
        finally:
            teardown_start = time.monotonic()
            await asyncio.gather(*(br.close_page(p) for p in pages))
            await asyncio.gather(
                *([emulator.close()] if emulator is not None else []), server.close()
            )
            teardown_s = time.monotonic() - teardown_start
        analysis_start = time.monotonic()
        if all(v is None for v in viewers):
            raise RunFailed(f"no viewer of {slot.arm} (block {slot.block}) loaded the player")
        if all(v is None or (v.get("error") and not v.get("segments")) for v in viewers):
            errors = "; ".join(str(v.get("error")) for v in viewers if v)
            raise RunFailed(f"{slot.arm} (block {slot.block}): no viewer got media: {errors}")
        link, down, lateness = (self._link(log) if emulator is not None
                              else ({}, DirectionLog(), None))
        record = self._record(
            design, slot, started, log, viewers=viewers, link=link, down=down, lateness=lateness,
            player_series=series, telemetry=telemetry, cpu_s=cpu_s,
            web_version=web_version,
            arm_config={
                "arm": {"cc": arm.cc, "params": dict(arm.params), "player": dict(arm.player)},
                "player_query": player_query(design, arm, 0).replace(
                    "127.0.0.1%3A0", "127.0.0.1%3AEMULATOR_PORT"
                ),
            },
            timings={"setup_s": setup_s, "played_s": played_s, "teardown_s": teardown_s,
                     "analysis_s": time.monotonic() - analysis_start},
        )
        record["overhead_s"] = round(time.monotonic() - started.wall - played_s, 3)
        return record

    async def _run_webrtc(self, design: Design, slot: Slot) -> dict[str, Any]:
        """The WebRTC arm: sender page → coturn → emulator (the scenario, the block's seed) →
        receiver page; the same media, link and duration as the live arms (docs/webrtc.md)."""
        started = _RunStart.now()
        log = self._log_path(design, slot)
        server = ServerProcess(self.media, extra_args=["--live-media", str(self.media)])
        turn = TurnServer()
        emulator: EmulatorProcess | None = None
        try:
            info = await server.start()
            turn_port = await turn.start()
            emulator = self._emulator(design, slot, turn_port, log)
            port = await emulator.start()
            pages = CallPages(
                page_url=info["page_url"],
                sender_turn=turn.url,
                receiver_turn=turn_url(port),
                bitrate_bps=(design.bitrate_kbps or 2500) * 1000,
            )
            setup_s = time.monotonic() - started.wall
            play_start = time.monotonic()
            try:
                call = await run_call(self.browser, pages, design.duration_s)
            except CallFailed as exc:
                raise RunFailed(f"webrtc (block {slot.block}): {exc}") from None
            played_s = time.monotonic() - play_start
            cpu_s = started.cpu_usage(server, emulator)
        finally:
            teardown_start = time.monotonic()
            if emulator is not None:
                await emulator.close()
            await turn.close()
            await server.close()
            teardown_s = time.monotonic() - teardown_start
        analysis_start = time.monotonic()
        viewer = webrtc_viewer(call["receiver"])
        link, down, lateness = self._link(log)
        record = self._record(
            design, slot, started, log, viewers=[viewer], link=link, down=down, lateness=lateness,
            player_series=[webrtc_series(call)], telemetry=None, cpu_s=cpu_s,
            web_version=None,
            arm_config={
                "arm": {"cc": "webrtc", "params": {}},
                "webrtc": {"sender": call["sender"], "sender_url": pages.sender_url(),
                           "receiver_url": pages.receiver_url()},
            },
            timings={"setup_s": setup_s, "played_s": played_s, "teardown_s": teardown_s,
                     "analysis_s": time.monotonic() - analysis_start},
        )
        record["overhead_s"] = round(time.monotonic() - started.wall - played_s, 3)
        return record

    # -- shared by both kinds of run --------------------------------------------------------

    def _log_path(self, design: Design, slot: Slot) -> Path:
        log_dir = self.keep_logs or Path(self._tmp.name)
        log_dir.mkdir(parents=True, exist_ok=True)
        return log_dir / f"{design.experiment_id}-b{slot.block}-{slot.arm.replace(':', '_')}.log"

    @staticmethod
    def _emulator(design: Design, slot: Slot, upstream_port: int, log: Path) -> EmulatorProcess:
        return EmulatorProcess(
            upstream=f"127.0.0.1:{upstream_port}",
            scenario=design.scenario,
            params=design.scenario_params or None,
            seed=slot.network_seed,
            log=str(log),
            # Exact link timing while browser and server load both cores (docs/emulator.md).
            realtime=True,
        )

    def _link(self, log: Path) -> tuple[dict[str, Any], DirectionLog, dict[str, Any] | None]:
        """The emulator log's analysis, its downlink and its timer lateness (None: not
        recorded); the log is deleted unless kept."""
        try:
            parsed = parse_log(log)
        except UserError as exc:
            raise RunFailed(str(exc)) from None
        down = parsed.dirs.get("d") or DirectionLog()
        link = analyze(parsed)
        if not self.keep_logs:
            log.unlink(missing_ok=True)
        return link, down, parse_summary(parsed.header)

    def _record(
        self,
        design: Design,
        slot: Slot,
        started: _RunStart,
        log: Path,
        *,
        viewers: list[dict[str, Any] | None],
        link: dict[str, Any],
        down: DirectionLog,
        lateness: dict[str, Any] | None,
        player_series: list[list[dict[str, Any]]],
        telemetry: list[Any] | None,
        cpu_s: dict[str, float | None],
        web_version: str | None,
        arm_config: dict[str, Any],
        timings: dict[str, float],
    ) -> dict[str, Any]:
        down_link = link.get("down", {})
        return {
            **summarize_viewers(viewers),
            "frame_height": mean_frame_height(player_series),
            **{key: down_link.get(key) for key in _DOWNLINK_COLUMNS},
            **{key: None if value is None else round(value, 3) for key, value in cpu_s.items()},
            "loadavg_start": round(started.load[0], 2),
            "emulator_late_share": (lateness or {}).get("stalled_share"),
            "emulator_late_max_ms": (lateness or {}).get("max_ms"),
            "host_cpus": os.cpu_count(),
            "viewers": viewers,
            "link": link,
            "series": {"player": player_series, "link": link_series(down)},
            "telemetry": telemetry,
            "config": {
                "design": design.to_dict(),
                "experiment_id": design.experiment_id,
                "slot": {"index": slot.index, "block": slot.block, "position": slot.position},
                **arm_config,
                "network_seed": slot.network_seed,
                "scenario": (
                    {"name": NO_EMULATOR}
                    if design.scenario == NO_EMULATOR
                    else load_scenario(design.scenario, design.scenario_params).summary()
                ),
                "media": media_summary(self.media),
                "log": str(log) if self.keep_logs else None,
                **{key: round(value, 3) for key, value in timings.items()},
                "loadavg_start": [round(x, 2) for x in started.load],
                "loadavg_end": [round(x, 2) for x in os.getloadavg()],
                "cpus": os.cpu_count(),
            },
            "versions": {**self._versions, "web": web_version, "source_sha256": started.source},
        }


# The emulator log's downlink figures stored as run columns.
_DOWNLINK_COLUMNS = (
    "capacity_mbps",
    "throughput_mbps",
    "utilization",
    "p95_queue_delay_ms",
    "p95_signal_delay_ms",
    "loss_rate",
)


@dataclass(frozen=True)
class _RunStart:
    """When a run began, the load then, the server sources it ran, and Chromium's CPU time."""

    wall: float
    load: tuple[float, float, float]
    source: str
    chromium_cpu: dict[int, float]

    @classmethod
    def now(cls) -> _RunStart:
        return cls(time.monotonic(), os.getloadavg(), source_digest(), cpu.chromium_cpu())

    def cpu_usage(
        self, server: ServerProcess, emulator: EmulatorProcess | None
    ) -> dict[str, float | None]:
        """CPU seconds since the run began (server and emulator since they started; they start
        inside the window) and the window's length, for the starvation rule."""
        proc = emulator.proc if emulator is not None else None
        return {
            "server_cpu_s": server.cpu_seconds(),
            "emulator_cpu_s": None if proc is None else cpu.process_cpu_seconds(proc.pid),
            "browser_cpu_s": cpu.cpu_delta(self.chromium_cpu, cpu.chromium_cpu()),
            "cpu_window_s": time.monotonic() - self.wall,
        }


def mean_frame_height(series: Sequence[Sequence[dict[str, Any]]]) -> float | None:
    """The picture height on screen, averaged over the viewers' samples that had one (the
    resolution each arm chose: the live player's rendition, WebRTC's encoder)."""
    heights = [
        float(p["frame_height"]) for points in series for p in points
        if isinstance(p.get("frame_height"), int | float) and p["frame_height"] > 0
    ]
    return float(np.mean(heights)) if heights else None


def webrtc_viewer(receiver: dict[str, Any]) -> dict[str, Any]:
    """The WebRTC receiver's metrics in the player's vocabulary: freezes are lateness (freeze
    ratio = buffering ratio), the mean bitrate is bytes received over play time."""
    viewer = dict(receiver)
    play_s = receiver.get(metric("playSeconds", "webrtc_receiver")) or 0
    received = receiver.get(metric("bytesReceived", "webrtc_receiver"))
    if play_s > 0 and received:
        viewer[metric("meanBitrateKbps")] = received * 8 / play_s / 1000
    viewer.setdefault(metric("ended"), False)
    viewer.setdefault(metric("bitrateSwitches"), None)
    return viewer


def webrtc_series(call: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-second receiver samples as player points: a second with freeze time is 'stalled';
    the jitter buffer stands in for the player's buffer."""
    out: list[dict[str, Any]] = []
    start = call.get("playing_at_s")
    last_freeze = 0.0
    for sample in call.get("samples") or []:
        freeze = float(sample.get("freeze_s") or 0.0)
        t_s = (sample["t_ms"] / 1000 - start) if start else len(out)
        out.append({
            "t_s": round(t_s, 3),
            "state": "stalled" if freeze > last_freeze else "playing",
            "buffer_s": (sample.get("jitter_buffer_ms") or 0) / 1000,
            "latency_ms": sample.get("latency_last_ms"),
            "receive_bps": sample.get("receive_bps"),
            "target_bps": (sample.get("sender") or {}).get("target_bps"),
            "width": sample.get("width"),
            "frame_height": sample.get("height"),
            "fps": sample.get("fps"),
        })
        last_freeze = freeze
    return out

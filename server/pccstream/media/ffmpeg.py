"""Locating and running ffmpeg/ffprobe, turning their failures into one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from pccstream.child_process import die_with_parent
from pccstream.errors import ToolMissingError, UserError


@dataclass(frozen=True)
class Tools:
    ffmpeg: str
    ffprobe: str


@dataclass(frozen=True)
class VideoInfo:
    """What `package` needs to know about an input file."""

    width: int
    height: int
    fps: Fraction | None  # None when the container does not say
    duration_s: float | None
    codec: str


def find_tools(search_path: str | None = None) -> Tools:
    """Find ffmpeg and ffprobe on `search_path` (default: $PATH)."""
    found: dict[str, str] = {}
    for name in ("ffmpeg", "ffprobe"):
        path = shutil.which(name, path=search_path)
        if path is None:
            raise ToolMissingError(
                f"{name} not found on PATH; install ffmpeg (e.g. apt-get install ffmpeg)"
            )
        found[name] = path
    return Tools(ffmpeg=found["ffmpeg"], ffprobe=found["ffprobe"])


_GENERIC = (
    "Conversion failed",
    "Error initializing output stream",
    "Could not write header",
    "Error while filtering",
    "Error initializing complex filters",
    "Invalid argument",
    "Svt[info]",
)


def last_error_line(stderr: str) -> str:
    """The most telling line of ffmpeg's stderr: the last non-empty one, trimmed."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "no error output"
    # ffmpeg ends with generic lines ("Conversion failed!"); the cause is just before them.
    specific = [line for line in lines if not line.startswith(_GENERIC)]
    line = specific[-1] if specific else lines[-1]
    # "[AVFilterGraph @ 0x55…] No such filter" → "No such filter": the address is noise.
    if line.startswith("[") and " @ 0x" in line.split("]", 1)[0]:
        line = line.split("] ", 1)[-1]
    return line if len(line) <= 300 else line[:297] + "..."


def run_ffmpeg(
    tools: Tools,
    args: Sequence[str],
    *,
    what: str,
    total_s: float | None = None,
    report: Callable[[str], None] | None = None,
) -> None:
    """Run ffmpeg with `args`; report progress about every 5 s; raise UserError on failure.

    stderr goes to a temporary file (not a pipe) so that reading progress from stdout can
    never deadlock on a full stderr pipe.
    """
    cmd = [
        tools.ffmpeg,
        "-hide_banner",
        "-nostdin",
        "-nostats",
        "-v",
        "error",
        "-progress",
        "pipe:1",
        *args,
    ]
    started = time.monotonic()
    last_report = started
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as err:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=err, text=True, preexec_fn=die_with_parent
        )
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                key, _, value = line.strip().partition("=")
                if key != "out_time_us" or report is None or not value.isdigit():
                    continue
                now = time.monotonic()
                if now - last_report >= 5.0:
                    last_report = now
                    done_s = int(value) / 1e6
                    of = f"/{total_s:.1f}" if total_s else ""
                    speed = done_s / max(now - started, 1e-9)
                    report(f"{what}: {done_s:.1f}{of} s encoded ({speed:.2f}x realtime)")
            code = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        if code != 0:
            err.seek(0)
            raise UserError(f"{what} failed: ffmpeg: {last_error_line(err.read())}")


def probe_video(tools: Tools, path: Path) -> VideoInfo:
    """Describe the first video stream of `path`; raise UserError naming the file if none."""
    if not path.exists():
        raise UserError(f"{path}: input file not found")
    if not path.is_file():
        raise UserError(f"{path}: not a regular file")
    if not os.access(path, os.R_OK):
        raise UserError(f"{path}: permission denied")
    proc = subprocess.run(
        [
            tools.ffprobe,
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=codec_name,width,height,avg_frame_rate,r_frame_rate:format=duration",
            "-of",
            "json",
            str(path),
        ],
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    )
    if proc.returncode != 0:
        reason = last_error_line(proc.stderr).removeprefix(f"{path}: ")
        raise UserError(f"{path}: not a readable video ({reason})")
    try:
        info = json.loads(proc.stdout)
        streams = info.get("streams") or []
    except (json.JSONDecodeError, AttributeError):
        raise UserError(f"{path}: not a readable video (ffprobe gave no description)") from None
    if not streams:
        raise UserError(f"{path}: no video stream")
    stream = streams[0]
    width, height = stream.get("width"), stream.get("height")
    if not isinstance(width, int) or not isinstance(height, int) or width <= 0 or height <= 0:
        raise UserError(f"{path}: video stream has no picture size")
    fps = _rate(stream.get("avg_frame_rate")) or _rate(stream.get("r_frame_rate"))
    duration: float | None = None
    try:
        duration = float(info.get("format", {}).get("duration"))
    except (TypeError, ValueError):
        duration = None
    return VideoInfo(
        width=width,
        height=height,
        fps=fps,
        duration_s=duration,
        codec=str(stream.get("codec_name", "?")),
    )


def _rate(text: object) -> Fraction | None:
    if not isinstance(text, str):
        return None
    try:
        rate = Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None
    # Containers report nonsense like 90000/1 for variable-rate streams.
    return rate if 0 < rate <= 240 else None


def stderr_reporter(message: str) -> None:
    print(f"media: {message}", file=sys.stderr, flush=True)

"""Shared helpers for the media tests: small encodes, decoding frames to numpy."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from pccstream.media.manifest import Rendition

requires_ffmpeg = pytest.mark.skipif(
    shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
    reason="ffmpeg/ffprobe not installed",
)


def quiet(_message: str) -> None:
    """Progress reporter that swallows the lines (tests check results, not chatter)."""


def decode_gray(rendition: Rendition, segment: int, frames: int) -> npt.NDArray[np.uint8]:
    """Decode the first `frames` frames of one segment (init + segment) as gray pictures."""
    data = rendition.init.path.read_bytes() + rendition.segments[segment].path.read_bytes()
    proc = subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-f",
            "mp4",
            "-i",
            "pipe:0",
            "-frames:v",
            str(frames),
            "-f",
            "rawvideo",
            "-pix_fmt",
            "gray",
            "pipe:1",
        ],
        input=data,
        capture_output=True,
        check=True,
    )
    pictures = np.frombuffer(proc.stdout, dtype=np.uint8)
    return pictures.reshape(-1, rendition.height, rendition.width)


def make_video(path: Path, *, width: int, height: int, seconds: float) -> Path:
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"testsrc=size={width}x{height}:rate=25:duration={seconds}",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            str(path),
        ],
        check=True,
    )
    return path

"""Synthetic test video with a human-readable and a machine-readable frame number.

Every frame shows (on top of ffmpeg's moving `testsrc2` pattern):

* the frame number and presentation timestamp as large text in the middle, and the
  rendition (bitrate, size, codec) at the bottom left — for people watching;
* a binary code of the frame number at the top-left — for a page reading the frame from
  a canvas (glass-to-glass latency, frame drops).

Binary code layout, in the pixels of whatever rendition is decoded (height H):

* block size b = H / 15 pixels (16 px at 240p, 24 at 360p, 32 at 480p, 48 at 720p,
  72 at 1080p) — proportional to the height so that it is the same code in every
  rendition, and at least 16 px so it survives compression at 300 kbit/s;
* two rows of 24 blocks starting at (0, 0): row 0 spans y ∈ [0, b), row 1 y ∈ [b, 2b);
  column i spans x ∈ [i·b, (i+1)·b), i = 0 … 23;
* column i carries bit (23 − i) of the frame number n (most significant bit leftmost);
  n counts output frames from 0, so n / fps is the frame's presentation time;
* row 0 is white where the bit is 1 and black where it is 0; row 1 is the complement.
  A reader samples the middle of each block and takes bit = (row 0 brighter than row 1);
  requiring every pair to differ clearly tells a coded frame from any other picture.

`read_frame_code` is the reference reader (used by the tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

CODE_BITS = 24
CODE_BLOCKS_PER_HEIGHT = 15  # b = H / 15
FONT_FILE = Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
# A pair of blocks must differ by at least this much luma (0–255) to count as a code.
_MIN_CONTRAST = 60


def code_block_size(height: int) -> float:
    return height / CODE_BLOCKS_PER_HEIGHT


def _font_option() -> str:
    # Without a font file drawtext falls back to fontconfig's default font.
    return f"fontfile={FONT_FILE}:" if FONT_FILE.is_file() else ""


def burn_in_filters(height: int) -> list[str]:
    """Filters drawing the binary code, frame counter and timestamp on a picture H high."""
    b = code_block_size(height)
    row1, row2 = round(b), round(2 * b)
    filters = [f"drawbox=x=0:y=0:w={round(CODE_BITS * b)}:h={row2}:color=black:t=fill"]
    for column in range(CODE_BITS):
        weight = 2 ** (CODE_BITS - 1 - column)
        x0, x1 = round(column * b), round((column + 1) * b)
        bit = f"mod(floor(n/{weight}),2)"
        filters.append(f"drawbox=x={x0}:y=0:w={x1 - x0}:h={row1}:color=white:t=fill:enable='{bit}'")
        filters.append(
            f"drawbox=x={x0}:y={row1}:w={x1 - x0}:h={row2 - row1}:color=white"
            f":t=fill:enable='eq({bit},0)'"
        )
    size = max(16, height // 8)
    common = (
        f"drawtext={_font_option()}fontsize={size}:fontcolor=white:box=1"
        f":boxcolor=black@0.6:boxborderw={max(2, size // 8)}:x=(w-tw)/2"
    )
    filters.append(common + r":y=h*0.38:text='frame %{eif\:n\:d\:6}'")
    filters.append(common + rf":y=h*0.38+{round(size * 1.4)}:text='t %{{pts\:hms}}'")
    return filters


def label_filter(text: str, height: int) -> str:
    """Small static caption (rendition id, size, codec) at the bottom left."""
    size = max(12, height // 16)
    safe = "".join(ch for ch in text if ch.isalnum() or ch in " .-_x")
    return (
        f"drawtext={_font_option()}fontsize={size}:fontcolor=yellow:box=1"
        f":boxcolor=black@0.6:x={size // 2}:y=h-th-{size // 2}:text='{safe}'"
    )


def synth_input_args(width: int, height: int, fps: str, duration_s: float) -> list[str]:
    """ffmpeg input options for the moving `testsrc2` pattern."""
    return [
        "-f",
        "lavfi",
        "-i",
        f"testsrc2=size={width}x{height}:rate={fps}:duration={duration_s:g}",
    ]


def read_frame_code(gray: npt.NDArray[np.uint8]) -> int | None:
    """Frame number from a decoded luma (or gray) picture, or None if there is no code."""
    height = gray.shape[0]
    b = code_block_size(height)
    half = max(1, round(b / 4))  # sample the middle half of each block, away from edges
    value = 0
    for column in range(CODE_BITS):
        cx = round((column + 0.5) * b)
        means: Sequence[float] = [
            float(
                gray[
                    round((row + 0.5) * b) - half : round((row + 0.5) * b) + half,
                    cx - half : cx + half,
                ].mean()
            )
            for row in (0, 1)
        ]
        if abs(means[0] - means[1]) < _MIN_CONTRAST:
            return None
        value = (value << 1) | int(means[0] > means[1])
    return value

"""Bitrate ladders: `300k,750k,1500k,3000k` → typed rungs with a resolution each.

A rung's resolution follows from its bitrate (a conventional ABR ladder), so a single
`--ladder 3000k,6000k,12000k` is enough to describe an experiment; `50M@1280x720` sets one
rung's resolution explicitly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pccstream.errors import UserError

DEFAULT_LADDER = "300k,750k,1500k,3000k"

# Lower bound catches "300" meant as kbit/s; upper bound catches a typo'd extra zero.
MIN_BITRATE_BPS = 50_000
MAX_BITRATE_BPS = 100_000_000

# (highest bitrate for this resolution, width, height).  All 16:9 with even sizes, so the
# burned-in code (which spans 1.6 × height) fits and every encoder accepts the size.
_RESOLUTIONS: tuple[tuple[int, int, int], ...] = (
    (400_000, 426, 240),
    (1_000_000, 640, 360),
    (2_000_000, 854, 480),
    (4_500_000, 1280, 720),
)
_TOP_RESOLUTION = (1920, 1080)

_BITRATE_RE = re.compile(r"^(\d+(?:\.\d+)?)([kKmM]?)$")
_RESOLUTION_RE = re.compile(r"^(\d+)[xX](\d+)$")
# Even sizes (4:2:0 chroma); the upper bound is 4K, the lower keeps the burned-in code legible.
_MIN_HEIGHT = 144
_MAX_WIDTH, _MAX_HEIGHT = 3840, 2160


@dataclass(frozen=True)
class Rung:
    """One rendition to encode."""

    id: str  # e.g. "1500k"; also the rendition's sub-directory name
    bitrate_bps: int
    width: int
    height: int


def parse_bitrate(text: str) -> int:
    """`300k` → 300000, `1.5M` → 1500000, `800000` → 800000 (bit/s)."""
    match = _BITRATE_RE.match(text.strip())
    if match is None:
        raise UserError(f"bad bitrate {text!r}: expected a number with optional k or M, e.g. 750k")
    number = float(match.group(1))
    unit = match.group(2).lower()
    bps = round(number * {"": 1, "k": 1_000, "m": 1_000_000}[unit])
    if bps <= 0:
        raise UserError(f"bad bitrate {text!r}: must be greater than zero")
    if bps < MIN_BITRATE_BPS:
        raise UserError(
            f"bad bitrate {text!r}: {bps} bit/s is below {MIN_BITRATE_BPS // 1000}k"
            " (a bare number is bit/s; did you mean k?)"
        )
    if bps > MAX_BITRATE_BPS:
        raise UserError(f"bad bitrate {text!r}: above {MAX_BITRATE_BPS // 1_000_000}M")
    return bps


def rung_id(bitrate_bps: int) -> str:
    """Directory-safe name: `1500k`, or plain bit/s when not a whole kbit/s."""
    return f"{bitrate_bps // 1000}k" if bitrate_bps % 1000 == 0 else str(bitrate_bps)


def resolution_for(bitrate_bps: int) -> tuple[int, int]:
    for limit, width, height in _RESOLUTIONS:
        if bitrate_bps <= limit:
            return width, height
    return _TOP_RESOLUTION


def parse_resolution(text: str) -> tuple[int, int]:
    """`1280x720` → (1280, 720): even, at least 144 high, wide enough for the burned-in code
    (1.6 × height), at most 3840x2160."""
    match = _RESOLUTION_RE.match(text.strip())
    if match is None:
        raise UserError(f"bad resolution {text!r}: expected WIDTHxHEIGHT, e.g. 1280x720")
    width, height = int(match.group(1)), int(match.group(2))
    if width % 2 or height % 2:
        raise UserError(f"bad resolution {text!r}: width and height must be even")
    if not _MIN_HEIGHT <= height <= _MAX_HEIGHT or width > _MAX_WIDTH:
        raise UserError(
            f"bad resolution {text!r}: must be within {_MAX_WIDTH}x{_MAX_HEIGHT} and at least "
            f"{_MIN_HEIGHT} high"
        )
    if width * 10 < height * 16:
        raise UserError(
            f"bad resolution {text!r}: narrower than 1.6 x height (the burned-in frame code)"
        )
    return width, height


def parse_ladder(text: str) -> tuple[Rung, ...]:
    """Parse a comma-separated ladder (`BITRATE` or `BITRATE@WxH` items); returns rungs
    sorted by ascending bitrate."""
    if not text.strip():
        raise UserError("bad ladder '': expected bitrates like 300k,750k,1500k")
    seen: dict[int, str] = {}
    rungs: list[Rung] = []
    for position, item in enumerate(text.split(","), start=1):
        if not item.strip():
            raise UserError(f"bad ladder {text!r}: item {position} is empty")
        bitrate_text, at, resolution_text = item.partition("@")
        try:
            bps = parse_bitrate(bitrate_text)
            size = parse_resolution(resolution_text) if at else resolution_for(bps)
        except UserError as exc:
            raise UserError(f"bad ladder {text!r}: item {position}: {exc}") from None
        if bps in seen:
            raise UserError(
                f"bad ladder {text!r}: item {position} {item.strip()!r} duplicates {seen[bps]!r}"
            )
        seen[bps] = item.strip()
        width, height = size
        rungs.append(Rung(id=rung_id(bps), bitrate_bps=bps, width=width, height=height))
    return tuple(sorted(rungs, key=lambda r: r.bitrate_bps))

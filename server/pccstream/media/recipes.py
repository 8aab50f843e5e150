"""The named media (`default`, `live`) every command falls back to, defined once in
infra/media/recipes.toml (shipped with the package): the bootstrap makes them in the checkout's
media/; an installed pccstream makes them on first use in the per-user cache (ffmpeg needed).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import sys
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from pccstream.errors import UserError
from pccstream.media.ffmpeg import find_tools, stderr_reporter
from pccstream.media.ladder import DEFAULT_LADDER, parse_ladder
from pccstream.media.package import ENCODER_REVISION, make_settings, synthesize
from pccstream.paths import MEDIA_RECIPES, data_path, media_root

_KEYS = {"duration", "ladder", "segment_seconds", "chunk_frames", "codec", "fps", "vbv_frames"}
# Written beside manifest.json by `make`: the fingerprint of the recipe the media was made
# from, so a changed recipe makes the media again (bootstrap, first use).
FINGERPRINT_NAME = ".recipe-fingerprint"


@dataclass(frozen=True)
class Recipe:
    """`pccstream media synth` options of one named media."""

    name: str
    duration_s: float
    ladder: str = DEFAULT_LADDER
    segment_seconds: str = "2"
    chunk_frames: int | None = None  # None: `media synth`'s default (0.2 s VOD chunks)
    codec: str = "h264"
    fps: str = "30"
    vbv_frames: int = 0  # 0: one second of bitrate (VOD); live: a few frames

    def fingerprint(self) -> str:
        """Stable digest of everything that decides the encoded bytes."""
        fields = asdict(self) | {"encoder_revision": ENCODER_REVISION}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def load_recipes(path: Path | None = None) -> dict[str, Recipe]:
    path = path or data_path(MEDIA_RECIPES)
    try:
        table = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: cannot read the media recipes: {exc}") from None
    recipes: dict[str, Recipe] = {}
    for name, spec in table.items():
        unknown = set(spec) - _KEYS
        if unknown or "duration" not in spec:
            raise UserError(
                f"{path} [{name}]: needs duration, may have {', '.join(sorted(_KEYS))}"
                + (f"; unknown {', '.join(sorted(unknown))}" if unknown else "")
            )
        recipes[name] = Recipe(
            name=name,
            duration_s=float(spec["duration"]),
            ladder=str(spec.get("ladder", DEFAULT_LADDER)),
            segment_seconds=str(spec.get("segment_seconds", "2")),
            chunk_frames=int(spec["chunk_frames"]) if "chunk_frames" in spec else None,
            codec=str(spec.get("codec", "h264")),
            fps=str(spec.get("fps", "30")),
            vbv_frames=int(spec.get("vbv_frames", 0)),
        )
    return recipes


def recipe(name: str) -> Recipe:
    recipes = load_recipes()
    if name not in recipes:
        raise UserError(f"media recipe {name!r}: expected one of {', '.join(sorted(recipes))}")
    return recipes[name]


def make(name: str, out: Path, *, force: bool) -> None:
    """Encode the named media into `out`."""
    spec = recipe(name)
    settings = make_settings(
        parse_ladder(spec.ladder),
        spec.codec,
        spec.fps,
        spec.segment_seconds,
        spec.chunk_frames,
        spec.vbv_frames,
    )
    (out / FINGERPRINT_NAME).unlink(missing_ok=True)
    synthesize(
        find_tools(),
        out,
        settings=settings,
        duration_s=spec.duration_s,
        force=force,
        report=stderr_reporter,
    )
    stamp(name, out)


def stamp(name: str, out: Path) -> None:
    """Record that `out` holds the named recipe's media as the recipe is now."""
    (out / FINGERPRINT_NAME).write_text(recipe(name).fingerprint() + "\n")


def is_current(name: str, out: Path) -> bool:
    """Whether `out` holds media made from the named recipe as it is now."""
    try:
        have = (out / FINGERPRINT_NAME).read_text().strip()
    except OSError:
        return False
    return (out / "manifest.json").is_file() and have == recipe(name).fingerprint()


def named_media(name: str) -> Path:
    """Where the named media lives (it may not be made yet)."""
    return media_root() / name


def ensure_named_media(name: str) -> Path:
    """The named media, encoded first if it is missing (once, even with concurrent callers:
    several workers of one machine)."""
    out = named_media(name)
    if is_current(name, out):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with (out.parent / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_current(name, out):
            print(f"pccstream: making the {name!r} media in {out} (missing or from an older "
                  "recipe)", file=sys.stderr)
            make(name, out, force=True)
    return out

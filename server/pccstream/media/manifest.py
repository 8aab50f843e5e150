"""`manifest.json`: the typed model, the writer and the validating loader.

The format is fixed by `shared/schemas/manifest.schema.json`.  The server calls
`load_manifest(media_dir)` once at start-up and then serves files by rendition index and
segment index; the loader therefore checks everything a request could later trip over:
types, ordering, that every file stays inside the media directory, exists and has the
recorded size.  Every error names the manifest file and the JSON path of the bad field.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pccstream.errors import UserError

MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 1


class ManifestError(UserError):
    """A media directory's manifest is missing, malformed or does not match the files."""


@dataclass(frozen=True)
class InitSegment:
    file: str  # as written in the manifest: relative to the media directory
    path: Path  # absolute path on disk (resolved, inside the media directory)
    bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "bytes": self.bytes}


@dataclass(frozen=True)
class Segment:
    index: int  # position in the rendition's `segments`: the wire's segment index
    file: str
    path: Path
    start_s: float
    duration_s: float
    bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "start_s": self.start_s,
            "duration_s": self.duration_s,
            "bytes": self.bytes,
        }


@dataclass(frozen=True)
class Rendition:
    index: int  # position in the manifest's `renditions`: the wire's rendition index
    id: str
    bitrate_bps: int  # target (ladder) bitrate
    width: int
    height: int
    codec: str  # RFC 6381, e.g. avc1.64001f
    mime: str  # e.g. video/mp4; codecs="avc1.64001f"
    init: InitSegment
    segments: tuple[Segment, ...]

    @property
    def measured_bps(self) -> float:
        """Average bitrate of the media segments (init excluded)."""
        seconds = sum(s.duration_s for s in self.segments)
        return sum(s.bytes for s in self.segments) * 8 / seconds if seconds > 0 else 0.0

    @property
    def lead_over_bitrate_s(self) -> float:
        """How far the segments' bytes ever run ahead of the target bitrate, in seconds of it:
        the buffer a player needs before it starts to play through a link at exactly that
        bitrate (0 when every prefix fits)."""
        sent = 0
        lead = 0.0
        for segment in self.segments:
            sent += segment.bytes * 8
            lead = max(lead, sent / self.bitrate_bps - (segment.start_s + segment.duration_s))
        return lead

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "bitrate_bps": self.bitrate_bps,
            "width": self.width,
            "height": self.height,
            "codec": self.codec,
            "mime": self.mime,
            "init": self.init.to_json(),
            "segments": [s.to_json() for s in self.segments],
        }


@dataclass(frozen=True)
class Manifest:
    media_dir: Path  # resolved
    version: int
    source: str | None
    duration_s: float
    segment_seconds: float
    fps: float | None
    renditions: tuple[Rendition, ...]
    json_bytes: bytes  # manifest.json exactly as on disk: the body of a MANIFEST response

    @property
    def segment_count(self) -> int:
        return len(self.renditions[0].segments)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version}
        if self.source is not None:
            out["source"] = self.source
        out["duration_s"] = self.duration_s
        out["segment_seconds"] = self.segment_seconds
        if self.fps is not None:
            out["fps"] = self.fps
        out["renditions"] = [r.to_json() for r in self.renditions]
        return out


def mime_for(codec: str) -> str:
    return f'video/mp4; codecs="{codec}"'


def write_manifest(media_dir: Path, document: dict[str, Any]) -> Path:
    """Write `document` as manifest.json atomically (readers never see half a file)."""
    target = media_dir / MANIFEST_NAME
    tmp = media_dir / f".{MANIFEST_NAME}.tmp"
    tmp.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return target


# --- loading ---------------------------------------------------------------------------


class _Checker:
    """Typed field access that reports `file: json.path: problem`."""

    def __init__(self, manifest_path: Path, media_dir: Path) -> None:
        self.where = manifest_path
        self.media_dir = media_dir

    def fail(self, path: str, problem: str) -> ManifestError:
        return ManifestError(f"{self.where}: {path}: {problem}")

    def obj(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, got {_show(value)}")
        return value

    def field(self, obj: dict[str, Any], key: str, path: str) -> tuple[Any, str]:
        sub = f"{path}.{key}" if path else key
        if key not in obj:
            raise self.fail(sub, "missing")
        return obj[key], sub

    def int_(self, obj: dict[str, Any], key: str, path: str, minimum: int | None = None) -> int:
        value, sub = self.field(obj, key, path)
        # bool is an int subclass in Python but not an integer in JSON.
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(sub, f"expected an integer, got {_show(value)}")
        if minimum is not None and value < minimum:
            raise self.fail(sub, f"must be at least {minimum}, got {value}")
        return value

    def num(
        self,
        obj: dict[str, Any],
        key: str,
        path: str,
        *,
        positive: bool = False,
        non_negative: bool = False,
    ) -> float:
        value, sub = self.field(obj, key, path)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(sub, f"expected a number, got {_show(value)}")
        number = float(value)
        if not math.isfinite(number):
            raise self.fail(sub, f"must be finite, got {value}")
        if positive and number <= 0:
            raise self.fail(sub, f"must be greater than 0, got {value}")
        if non_negative and number < 0:
            raise self.fail(sub, f"must not be negative, got {value}")
        return number

    def str_(self, obj: dict[str, Any], key: str, path: str) -> str:
        value, sub = self.field(obj, key, path)
        if not isinstance(value, str) or not value:
            raise self.fail(sub, f"expected a non-empty string, got {_show(value)}")
        return value

    def file(self, obj: dict[str, Any], path: str) -> tuple[str, Path, int]:
        name = self.str_(obj, "file", path)
        size = self.int_(obj, "bytes", path, minimum=0)
        sub = f"{path}.file"
        if Path(name).is_absolute() or "\\" in name:
            raise self.fail(sub, f"{name!r} must be a relative path with '/' separators")
        resolved = (self.media_dir / name).resolve()
        # resolve() follows symlinks too, so a link pointing outside is refused as well.
        if not resolved.is_relative_to(self.media_dir):
            raise self.fail(sub, f"{name!r} is outside the media directory {self.media_dir}")
        try:
            stat = resolved.stat()
        except OSError:
            raise self.fail(sub, f"{name!r} does not exist in {self.media_dir}") from None
        if not resolved.is_file():
            raise self.fail(sub, f"{name!r} is not a regular file")
        if stat.st_size != size:
            raise self.fail(
                f"{path}.bytes", f"{name!r} has {stat.st_size} bytes, manifest says {size}"
            )
        return name, resolved, size


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def load_manifest(media_dir: str | os.PathLike[str]) -> Manifest:
    """Load and fully validate `media_dir/manifest.json`; raise ManifestError if anything is off."""
    root = Path(media_dir)
    if not root.is_dir():
        raise ManifestError(f"{root}: media directory not found")
    root = root.resolve()
    manifest_path = root / MANIFEST_NAME
    try:
        raw = manifest_path.read_bytes()
    except FileNotFoundError:
        raise ManifestError(
            f"{manifest_path}: not found (create one with `pccstream media synth --out {root}`)"
        ) from None
    except OSError as exc:
        raise ManifestError(f"{manifest_path}: cannot read ({exc.strerror})") from None
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ManifestError(f"{manifest_path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ManifestError(
            f"{manifest_path}: line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})"
        ) from None

    c = _Checker(manifest_path, root)
    top = c.obj(document, "$")
    version = c.int_(top, "version", "")
    if version != MANIFEST_VERSION:
        raise c.fail("version", f"unsupported version {version} (expected {MANIFEST_VERSION})")
    source: str | None = None
    if "source" in top:
        source = c.str_(top, "source", "")
    duration_s = c.num(top, "duration_s", "", positive=True)
    segment_seconds = c.num(top, "segment_seconds", "", positive=True)
    fps = c.num(top, "fps", "", positive=True) if "fps" in top else None
    raw_renditions, rpath = c.field(top, "renditions", "")
    if not isinstance(raw_renditions, list) or not raw_renditions:
        raise c.fail(rpath, f"expected a non-empty array, got {_show(raw_renditions)}")

    renditions: list[Rendition] = []
    ids: set[str] = set()
    for index, raw_rendition in enumerate(raw_renditions):
        path = f"renditions[{index}]"
        r = c.obj(raw_rendition, path)
        rid = c.str_(r, "id", path)
        if rid in ids:
            raise c.fail(f"{path}.id", f"duplicate id {rid!r}")
        ids.add(rid)
        bitrate = c.int_(r, "bitrate_bps", path, minimum=1)
        if renditions and bitrate <= renditions[-1].bitrate_bps:
            raise c.fail(
                f"{path}.bitrate_bps",
                f"{bitrate} is not above the previous rendition's "
                f"{renditions[-1].bitrate_bps} (renditions must ascend by bitrate)",
            )
        width = c.int_(r, "width", path, minimum=1)
        height = c.int_(r, "height", path, minimum=1)
        codec = c.str_(r, "codec", path)
        mime = c.str_(r, "mime", path)
        if codec not in mime:
            raise c.fail(f"{path}.mime", f"{mime!r} does not name codec {codec!r}")
        init_obj = c.obj(c.field(r, "init", path)[0], f"{path}.init")
        init_file, init_path, init_bytes = c.file(init_obj, f"{path}.init")
        raw_segments, spath = c.field(r, "segments", path)
        if not isinstance(raw_segments, list) or not raw_segments:
            raise c.fail(spath, f"expected a non-empty array, got {_show(raw_segments)}")
        segments: list[Segment] = []
        for sindex, raw_segment in enumerate(raw_segments):
            sp = f"{spath}[{sindex}]"
            s = c.obj(raw_segment, sp)
            file, resolved, size = c.file(s, sp)
            segments.append(
                Segment(
                    index=sindex,
                    file=file,
                    path=resolved,
                    bytes=size,
                    start_s=c.num(s, "start_s", sp, non_negative=True),
                    duration_s=c.num(s, "duration_s", sp, positive=True),
                )
            )
        if renditions and len(segments) != len(renditions[0].segments):
            # The wire addresses a segment by index in any rendition (ABR switching), so
            # renditions must be cut at the same points.
            raise c.fail(
                spath,
                f"has {len(segments)} segments but renditions[0] has "
                f"{len(renditions[0].segments)} (renditions must be aligned)",
            )
        renditions.append(
            Rendition(
                index=index,
                id=rid,
                bitrate_bps=bitrate,
                width=width,
                height=height,
                codec=codec,
                mime=mime,
                init=InitSegment(file=init_file, path=init_path, bytes=init_bytes),
                segments=tuple(segments),
            )
        )
    return Manifest(
        media_dir=root,
        version=version,
        source=source,
        duration_s=duration_s,
        segment_seconds=segment_seconds,
        fps=fps,
        renditions=tuple(renditions),
        json_bytes=raw,
    )

"""The live channel: a media directory played in a loop in real time, cut into groups and chunks.

Model (shared/PROTOCOL.md, "Live"): segment s of the loop is group g = k·S + s of the live
stream; live frame L = g·F + j is captured at `epoch + L / fps` and a chunk is published when its
last frame is captured. Chunks are the segment's own CMAF chunks (`moof` + `mdat`; one frame
each when packaged with `--chunk-frames 1`); only their `tfdt` is rewritten, so media time is
live time since the epoch. Nothing is encoded at run time: publishing a chunk is a timer and
a small copy.

`LiveChannel` owns the clock and the timer; each viewer's `LiveSubscription` (live_subscription.py)
gets every chunk of its rendition as it is published.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol

from pccstream.errors import UserError
from pccstream.media.manifest import Manifest, Rendition, load_manifest
from pccstream.media.mp4 import InitInfo, fragments, parse_init, parse_segment, tfdt_value_offset

log = logging.getLogger("pccstream.live")

# Groups longer than this are not "short chunks" any more (the bound for live).
MAX_GROUP_SECONDS = 0.5


@dataclass(frozen=True)
class Chunk:
    """One CMAF chunk of a loop segment, ready to be re-timed."""

    first_frame: int  # index of its first frame in the group
    frames: int
    data: bytes  # moof + mdat
    tfdt_value_offset: int  # where tfdt's 64-bit baseMediaDecodeTime is in `data`

    @property
    def last_frame(self) -> int:
        return self.first_frame + self.frames - 1

    def retimed(self, decode_time: int) -> bytes:
        out = bytearray(self.data)
        struct.pack_into(">Q", out, self.tfdt_value_offset, decode_time)
        return bytes(out)


@dataclass(frozen=True)
class LiveRendition:
    meta: Rendition  # the manifest's description (id, bitrate, size, codec, mime)
    init: bytes
    ticks_per_frame: int  # track timescale / fps
    # groups[s] = the chunks of loop segment s
    groups: tuple[tuple[Chunk, ...], ...]

    def describe(self) -> dict[str, Any]:
        """As in the manifest, without `init` and `segments` (the LIVE_INFO body)."""
        return {k: v for k, v in self.meta.to_json().items() if k not in ("init", "segments")}


class ChunkSink(Protocol):
    """A subscriber: told about each chunk of the groups it wants, as it is published."""

    def rendition_for(self, group: int) -> int | None:
        """The rendition wanted for `group`, or None for a group it does not want."""
        ...

    def on_chunk(self, group: int, chunk_index: int, final: bool) -> None: ...


def split_chunks(
    segment: bytes, init_info: InitInfo, frames_per_group: int, where: str
) -> list[Chunk]:
    """The segment's moof+mdat pairs as chunks, each with its frame range in the group."""
    chunks: list[Chunk] = []
    next_frame = 0
    try:
        spans = fragments(segment)
        for start, end in spans:
            data = segment[start:end]
            info = parse_segment(data, init_info, where)
            chunks.append(Chunk(next_frame, info.sample_count, data, tfdt_value_offset(data)))
            next_frame += info.sample_count
    except ValueError as exc:
        raise UserError(f"{where}: {exc}") from None
    if not chunks:
        raise UserError(f"{where}: no moof+mdat chunk")
    if next_frame != frames_per_group:
        raise UserError(
            f"{where}: {next_frame} frames, but a live group must have exactly "
            f"{frames_per_group} (segment_seconds × fps)"
        )
    return chunks


def _fps_of(manifest: Manifest) -> Fraction:
    if manifest.fps is None:
        raise UserError(f"{manifest.media_dir}: the manifest has no fps; live needs it")
    return Fraction(manifest.fps).limit_denominator(1001)


def load_live_renditions(manifest: Manifest) -> tuple[tuple[LiveRendition, ...], int, int]:
    """(renditions, frames per group, loop groups) — checks every segment is a whole GOP of
    F frames starting with a keyframe. A short last segment is left out of the loop."""
    fps = _fps_of(manifest)
    frames = Fraction(manifest.segment_seconds) * fps
    where = str(manifest.media_dir)
    if manifest.segment_seconds > MAX_GROUP_SECONDS + 1e-9:
        raise UserError(
            f"{where}: segments are {manifest.segment_seconds:g} s; live groups must be "
            f"≤ {MAX_GROUP_SECONDS:g} s (package with --segment-seconds 0.5 --chunk-frames 1)"
        )
    if abs(frames - round(frames)) > Fraction(1, 1000):
        raise UserError(f"{where}: a segment is not a whole number of frames ({float(frames):g})")
    per_group = round(frames)
    loop_groups = min(
        sum(1 for s in r.segments if abs(s.duration_s - manifest.segment_seconds) < 1e-3)
        for r in manifest.renditions
    )
    if loop_groups < 2:
        raise UserError(f"{where}: a live loop needs at least 2 full segments")
    out: list[LiveRendition] = []
    for r in manifest.renditions:
        out.append(_load_rendition(r, per_group, loop_groups, fps))
    return tuple(out), per_group, loop_groups


def _load_rendition(r: Rendition, per_group: int, loop_groups: int, fps: Fraction) -> LiveRendition:
    init = r.init.path.read_bytes()
    info = parse_init(init, f"{r.id} init segment")
    ticks = Fraction(info.timescale) / fps
    if ticks.denominator != 1:
        raise UserError(f"{r.id}: timescale {info.timescale} is not a whole multiple of the fps")
    groups = []
    for seg in r.segments[:loop_groups]:
        data = seg.path.read_bytes()
        chunks = split_chunks(data, info, per_group, f"{r.id} {seg.file}")
        if not parse_segment(chunks[0].data, info, seg.file).starts_with_sync_sample:
            raise UserError(f"{r.id} {seg.file}: does not start with a keyframe")
        groups.append(tuple(chunks))
    return LiveRendition(
        meta=r, init=init, ticks_per_frame=int(ticks), groups=tuple(groups)
    )


class LiveChannel:
    """One live stream for the whole server, on the event loop's clock."""

    def __init__(
        self,
        renditions: tuple[LiveRendition, ...],
        *,
        fps: Fraction,
        frames_per_group: int,
        loop_groups: int,
        source: str = "",
        wall_clock_us: Callable[[], int] = lambda: time.time_ns() // 1000,
    ) -> None:
        self.renditions = renditions
        self.fps = fps
        self.frames_per_group = frames_per_group
        self.loop_groups = loop_groups
        self.source = source
        self._wall_clock_us = wall_clock_us
        self._sinks: set[ChunkSink] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.epoch_us = 0
        self._epoch_mono = 0.0
        self._next_frame = 0  # the next live frame whose capture is due

    @classmethod
    def open(cls, media_dir: Path) -> LiveChannel:
        manifest = load_manifest(media_dir)
        renditions, per_group, loop_groups = load_live_renditions(manifest)
        return cls(
            renditions,
            fps=_fps_of(manifest),
            frames_per_group=per_group,
            loop_groups=loop_groups,
            source=str(manifest.media_dir),
        )

    # --- clock --------------------------------------------------------------------------------

    def start(self) -> None:
        """Frame 0 is captured now."""
        self._loop = asyncio.get_running_loop()
        self._epoch_mono = self._loop.time()
        self.epoch_us = self._wall_clock_us()
        self._next_frame = 0
        self._arm()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._sinks.clear()

    @property
    def group_duration_s(self) -> float:
        return float(self.frames_per_group / self.fps)

    def capture_mono(self, frame: int) -> float:
        """Event-loop time at which live frame `frame` is captured."""
        return self._epoch_mono + float(frame / self.fps)

    def capture_us(self, frame: int) -> int:
        return self.epoch_us + math.floor(frame / self.fps * 1_000_000)

    def frames_captured(self) -> int:
        """Live frames captured so far (the next frame to be captured)."""
        return self._next_frame

    def live_edge_group(self) -> int:
        """The group being produced now (the one holding the next frame)."""
        return self._next_frame // self.frames_per_group

    # --- content --------------------------------------------------------------------------------

    def chunks(self, rendition: int, group: int) -> tuple[Chunk, ...]:
        return self.renditions[rendition].groups[group % self.loop_groups]

    def chunk_bytes(self, rendition: int, group: int, chunk_index: int) -> tuple[Chunk, bytes]:
        r = self.renditions[rendition]
        chunk = r.groups[group % self.loop_groups][chunk_index]
        frame = group * self.frames_per_group + chunk.first_frame
        return chunk, chunk.retimed(frame * r.ticks_per_frame)

    def published_chunks(self, rendition: int, group: int) -> int:
        """How many of the group's chunks (in this rendition) have been published."""
        captured = self._next_frame - group * self.frames_per_group
        return sum(1 for c in self.chunks(rendition, group) if c.last_frame < captured)

    def info(self) -> dict[str, Any]:
        return {
            "epoch_us": self.epoch_us,
            "fps": float(self.fps),
            "fps_num": self.fps.numerator,
            "fps_den": self.fps.denominator,
            "frames_per_group": self.frames_per_group,
            "group_duration_us": round(self.group_duration_s * 1_000_000),
            "loop_groups": self.loop_groups,
            "loop_frames": self.loop_groups * self.frames_per_group,
            "live_edge_group": self.live_edge_group(),
            "server_time_us": self._wall_clock_us(),
            "renditions": [r.describe() for r in self.renditions],
        }

    def info_json(self) -> bytes:
        return json.dumps(self.info(), separators=(",", ":")).encode()

    # --- subscribers --------------------------------------------------------------------------

    def add(self, sink: ChunkSink) -> None:
        self._sinks.add(sink)

    def remove(self, sink: ChunkSink) -> None:
        self._sinks.discard(sink)

    def _arm(self) -> None:
        assert self._loop is not None
        self._timer = self._loop.call_at(self.capture_mono(self._next_frame), self._on_capture)

    def _on_capture(self) -> None:
        """Capture every frame that is due (several after a late wake-up), publish chunks."""
        assert self._loop is not None
        now = self._loop.time()
        while self.capture_mono(self._next_frame) <= now + 1e-4:
            frame = self._next_frame
            self._next_frame += 1
            group, j = divmod(frame, self.frames_per_group)
            for sink in list(self._sinks):
                try:
                    self._publish_to(sink, group, j)
                except Exception:  # one viewer's failure must not stop the channel
                    log.exception("live: publishing group %d frame %d failed", group, j)
                    self._sinks.discard(sink)
        self._arm()

    def _publish_to(self, sink: ChunkSink, group: int, frame_in_group: int) -> None:
        rendition = sink.rendition_for(group)
        if rendition is None:
            return
        chunks = self.chunks(rendition, group)
        for index, chunk in enumerate(chunks):
            if chunk.last_frame == frame_in_group:
                sink.on_chunk(group, index, index == len(chunks) - 1)

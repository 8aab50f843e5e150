"""Encoding a source into aligned CMAF renditions and writing `manifest.json`.

One ffmpeg run decodes the source once, `split`s it and encodes every rendition with a
fixed GOP (a keyframe exactly every segment), so all renditions are cut at the same
frames and a player may switch rendition at any segment boundary.  ffmpeg's DASH muxer
writes one init segment and `.m4s` media segments per rendition into a staging directory;
we then read the boxes back (codec string, exact durations, keyframe at each segment
start), move the files into `<out>/<rendition id>/` and write the manifest last, so an
interrupted run never leaves a manifest pointing at missing files.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from pccstream.errors import UserError
from pccstream.media import synth
from pccstream.media.ffmpeg import Tools, probe_video, run_ffmpeg
from pccstream.media.ladder import Rung
from pccstream.media.manifest import (
    MANIFEST_NAME,
    Manifest,
    load_manifest,
    mime_for,
    write_manifest,
)
from pccstream.media.mp4 import parse_init, parse_segment

CODECS = ("h264", "vp9", "av1")
# Bump when the encoder's arguments change the bytes it writes: media made before are then
# made again where they are named (recipes) or cached (`pccstream ab`).
ENCODER_REVISION = 2  # 2: a chunked VOD stream's rate-control buffer starts at one chunk
ENCODER_REVISION_NAME = ".encoder-revision"
MAX_FPS = 120

Reporter = Callable[[str], None]


@dataclass(frozen=True)
class EncodeSettings:
    rungs: tuple[Rung, ...]
    codec: str
    fps: Fraction
    segment_seconds: Fraction
    # Frames per CMAF chunk (moof + mdat); 0 = one chunk per segment. Live channels use 1.
    chunk_frames: int = 0
    # Rate-control buffer (VBV) in frame durations; 0 = one second (VOD). Low-latency live
    # uses a few frames, which caps every frame (the keyframe too) near that many frames'
    # worth of bitrate, the way real-time encoders keep frames even (docs/media.md).
    vbv_frames: int = 0

    @property
    def segment_frames(self) -> int:
        return int(self.fps * self.segment_seconds)

    def vbv_bits(self, bitrate_bps: int) -> int:
        if self.vbv_frames == 0:
            return bitrate_bps
        return round(bitrate_bps * self.vbv_frames / self.fps)

    def vbv_start_bits(self, bitrate_bps: int) -> int | None:
        """What the rate-control buffer holds at the first frame; None leaves the encoder's
        default (90 % full).

        Whatever the buffer holds at the start, the stream may spend early: 90 % of a
        one-second VOD buffer let a 15 Mbit/s stream carry 15.8 Mbit/s for its first 4 s,
        which a player that starts after one chunk can only play through a faster link. Starting
        with one chunk's worth keeps every prefix within the bitrate plus that chunk, the
        buffer the player starts with. Whole-segment media and the live channel's few-frame
        buffer keep the default.
        """
        if self.vbv_frames or not self.chunk_frames:
            return None
        return min(self.vbv_bits(bitrate_bps), round(bitrate_bps * self.chunk_frames / self.fps))


def parse_positive(text: str, flag: str) -> Fraction:
    """A positive finite number (`2`, `0.5`, `30000/1001`) for `flag`, as an exact fraction."""
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise UserError(f"{flag} {text!r}: not a number") from None
    if value <= 0:
        raise UserError(f"{flag} {text}: must be greater than 0")
    return value


def make_settings(
    rungs: tuple[Rung, ...],
    codec: str,
    fps_text: str,
    segment_text: str,
    chunk_frames: int | None = None,
    vbv_frames: int = 0,
) -> EncodeSettings:
    if codec not in CODECS:
        raise UserError(f"--codec {codec!r}: expected one of {', '.join(CODECS)}")
    fps = parse_positive(fps_text, "--fps")
    if fps > MAX_FPS:
        raise UserError(f"--fps {fps_text}: above {MAX_FPS}")
    seg = parse_positive(segment_text, "--segment-seconds")
    frames = fps * seg
    # A fixed GOP needs a whole number of frames per segment.
    if frames.denominator != 1:
        raise UserError(
            f"--segment-seconds {segment_text} at --fps {fps_text} is "
            f"{float(frames):g} frames; it must be a whole number of frames"
        )
    if chunk_frames is None:
        chunk_frames = default_chunk_frames(frames.numerator, fps)
    if chunk_frames < 0 or (chunk_frames and frames.numerator % chunk_frames):
        raise UserError(
            f"--chunk-frames {chunk_frames}: must be 0 (whole segments) or divide the "
            f"{frames.numerator} frames of a segment"
        )
    if vbv_frames < 0 or vbv_frames > frames.numerator:
        raise UserError(
            f"--vbv-frames {vbv_frames}: must be 0 (one second) or 1 to the "
            f"{frames.numerator} frames of a segment"
        )
    return EncodeSettings(
        rungs=rungs,
        codec=codec,
        fps=fps,
        segment_seconds=seg,
        chunk_frames=chunk_frames,
        vbv_frames=vbv_frames,
    )


# Video on demand: CMAF chunks of at most this long (docs/media.md, "Chunks"). The player
# starts once the first chunk is appended, and below 0.1 s of buffer a late chunk stalls, so a
# chunk must hold more than that; 0.2 s keeps the first chunk (keyframe + 5 frames) small and
# costs ~100 bytes of moof per chunk (< 1 % of the 300 kbit/s rung).
VOD_CHUNK_SECONDS = Fraction(1, 5)


def default_chunk_frames(segment_frames: int, fps: Fraction) -> int:
    """The most frames per chunk that divide the segment and last at most VOD_CHUNK_SECONDS."""
    limit = max(1, int(VOD_CHUNK_SECONDS * fps))
    return max(n for n in range(1, limit + 1) if segment_frames % n == 0)


def _num(value: Fraction) -> str:
    """ffmpeg-friendly text for an exact number: `30`, `0.5`, `30000/1001`."""
    if value.denominator == 1:
        return str(value.numerator)
    as_float = float(value)
    return (
        f"{as_float:g}"
        if Fraction(f"{as_float:g}") == value
        else (f"{value.numerator}/{value.denominator}")
    )


def made_by_this_encoder(media: Path) -> bool:
    """Whether `media` was written with today's encoder arguments (`ENCODER_REVISION`)."""
    try:
        return (media / ENCODER_REVISION_NAME).read_text().strip() == str(ENCODER_REVISION)
    except OSError:
        return False


def _vbv_start_args(settings: EncodeSettings, index: int, bitrate_bps: int) -> list[str]:
    start = settings.vbv_start_bits(bitrate_bps)
    return [] if start is None else [f"-rc_init_occupancy:v:{index}", str(start)]


def encoder_args(settings: EncodeSettings) -> list[str]:
    """Per-codec options: fast presets, CBR-like rate control, keyframe every segment."""
    gop = str(settings.segment_frames)
    args = [
        "-g",
        gop,
        "-keyint_min",
        gop,
        "-force_key_frames",
        f"expr:gte(t,n_forced*{_num(settings.segment_seconds)})",
    ]
    if settings.codec == "h264":
        # No B-frames: decode order = presentation order, no edit lists, no negative
        # composition offsets — simplest possible timestamps for MSE and latency work.
        args += [
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-profile:v",
            "high",
            "-bf",
            "0",
            "-sc_threshold",
            "0",
            "-x264-params",
            "nal-hrd=cbr",
        ]
        for i, rung in enumerate(settings.rungs):
            b = str(rung.bitrate_bps)
            vbv = str(settings.vbv_bits(rung.bitrate_bps))
            args += [f"-b:v:{i}", b, f"-maxrate:v:{i}", b, f"-bufsize:v:{i}", vbv]
            args += _vbv_start_args(settings, i, rung.bitrate_bps)
    elif settings.codec == "vp9":
        args += [
            "-c:v",
            "libvpx-vp9",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
            "-lag-in-frames",
            "0",
            "-row-mt",
            "1",
        ]
        for i, rung in enumerate(settings.rungs):
            b = str(rung.bitrate_bps)
            # min = max = target selects libvpx's CBR mode.
            args += [
                f"-b:v:{i}",
                b,
                f"-minrate:v:{i}",
                b,
                f"-maxrate:v:{i}",
                b,
                f"-bufsize:v:{i}",
                str(settings.vbv_bits(rung.bitrate_bps)),
                *_vbv_start_args(settings, i, rung.bitrate_bps),
            ]
    else:
        # SVT-AV1 does CBR only with its low-delay prediction structure.
        args += ["-c:v", "libsvtav1", "-preset", "12", "-svtav1-params", "pred-struct=1:rc=2"]
        for i, rung in enumerate(settings.rungs):
            args += [f"-b:v:{i}", str(rung.bitrate_bps)]
    return args


def chunk_args(settings: EncodeSettings) -> list[str]:
    """CMAF chunking: one moof + mdat per `chunk_frames` frames (low-latency live)."""
    if settings.chunk_frames == 0:
        return []
    if settings.chunk_frames == 1:
        return ["-frag_type", "every_frame"]
    return ["-frag_type", "duration", "-frag_duration",
            _num(settings.chunk_frames / settings.fps)]


def muxer_args(settings: EncodeSettings, mpd: Path) -> list[str]:
    return [
        "-an",
        "-sn",
        "-dn",
        "-map_metadata",
        "-1",
        "-f",
        "dash",
        "-seg_duration",
        _num(settings.segment_seconds),
        "-use_template",
        "1",
        "-use_timeline",
        "1",
        "-single_file",
        "0",
        "-dash_segment_type",
        "mp4",
        # One adaptation set per rendition: the muxer refuses renditions with slightly
        # different aspect ratios (426x240 vs 640x360) in one set, and we don't use the MPD.
        "-adaptation_sets",
        " ".join(f"id={i},streams={i}" for i in range(len(settings.rungs))),
        "-init_seg_name",
        "init-$RepresentationID$.$ext$",
        "-media_seg_name",
        "seg-$RepresentationID$-$Number%05d$.$ext$",
        "-streaming",
        "0",
        "-ldash",
        "0",
        "-write_prft",
        "0",
        *chunk_args(settings),
        str(mpd),
    ]


def filter_graph(head: list[str], tails: list[list[str]]) -> tuple[str, list[str]]:
    """`[0:v:0]head,split=N[s0]…; [si]tail_i[vi]` and the output labels to map."""
    parts = [
        f"[0:v:0]{','.join([*head, f'split={len(tails)}'])}"
        + "".join(f"[s{i}]" for i in range(len(tails)))
    ]
    labels = []
    for i, tail in enumerate(tails):
        parts.append(f"[s{i}]{','.join(tail)}[v{i}]")
        labels.append(f"[v{i}]")
    return ";".join(parts), labels


def prepare_output(out: Path, force: bool) -> None:
    """Create `out`, or accept it if empty / a previous media directory / --force."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST_NAME).exists() and not force:
        raise UserError(
            f"--out {out}: directory is not empty and has no {MANIFEST_NAME}; "
            "choose another directory or pass --force (existing files are kept)"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create directory ({exc.strerror})") from None


def _remove_previous(out: Path) -> None:
    """Delete the files a previous manifest in `out` listed (and nothing else)."""
    try:
        old = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
        files = [r["init"]["file"] for r in old["renditions"]]
        files += [s["file"] for r in old["renditions"] for s in r["segments"]]
    except (OSError, ValueError, KeyError, TypeError):
        return  # nothing trustworthy to clean up; new files overwrite same-named ones
    root = out.resolve()
    dirs: set[Path] = set()
    for name in files:
        path = (root / str(name)).resolve()
        if path.is_relative_to(root) and path.is_file():
            path.unlink()
            dirs.add(path.parent)
    for directory in sorted(dirs, key=lambda d: len(d.parts), reverse=True):
        if directory != root and not any(directory.iterdir()):
            directory.rmdir()


def encode(
    tools: Tools,
    out: Path,
    *,
    settings: EncodeSettings,
    input_args: list[str],
    graph: str,
    labels: list[str],
    source: str,
    total_s: float | None,
    force: bool,
    report: Reporter,
) -> Manifest:
    """Run the encode into a staging directory, verify it, publish it, write the manifest."""
    prepare_output(out, force)
    try:
        stage = Path(tempfile.mkdtemp(prefix=".pccstream-staging-", dir=out))
    except OSError as exc:
        raise UserError(f"--out {out}: cannot write there ({exc.strerror})") from None
    try:
        mpd = stage / "stream.mpd"
        args = [*input_args, "-filter_complex", graph]
        for label in labels:
            args += ["-map", label]
        args += encoder_args(settings) + muxer_args(settings, mpd)
        span = f"{total_s:g} s" if total_s else "whole input"
        report(
            f"encoding {len(settings.rungs)} rendition(s) with {settings.codec}: {span} at "
            f"{_num(settings.fps)} fps, {_num(settings.segment_seconds)} s segments"
        )
        started = time.monotonic()
        run_ffmpeg(tools, args, what=f"encoding {source}", total_s=total_s, report=report)
        report(f"encoded in {time.monotonic() - started:.1f} s")
        document = _describe(stage, out, settings, source)
        (out / ENCODER_REVISION_NAME).unlink(missing_ok=True)
        _remove_previous(out)
        _publish(stage, out, settings)
        write_manifest(out, document)
        (out / ENCODER_REVISION_NAME).write_text(f"{ENCODER_REVISION}\n")
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    manifest = load_manifest(out)  # the same checks the server will make
    for r in manifest.renditions:
        report(
            f"{r.id}: {r.width}x{r.height} {r.codec}, {len(r.segments)} segments, "
            f"{sum(s.bytes for s in r.segments) / 1e6:.2f} MB, measured "
            f"{r.measured_bps / 1000:.0f} kbit/s (target {r.bitrate_bps // 1000}), ahead of "
            f"its target by at most {r.lead_over_bitrate_s:.2f} s"
        )
    report(f"wrote {out / MANIFEST_NAME} ({manifest.duration_s:g} s)")
    return manifest


def _staged_segments(stage: Path, index: int) -> list[Path]:
    return sorted(stage.glob(f"seg-{index}-*.m4s"))


def _final_names(rung: Rung, count: int) -> tuple[str, list[str]]:
    return f"{rung.id}/init.mp4", [f"{rung.id}/seg-{i:05d}.m4s" for i in range(count)]


def _describe(stage: Path, out: Path, settings: EncodeSettings, source: str) -> dict[str, Any]:
    """Read the staged files back into the manifest document, checking alignment."""
    renditions: list[dict[str, Any]] = []
    reference: list[tuple[float, float]] | None = None
    for index, rung in enumerate(settings.rungs):
        init_path = stage / f"init-{index}.m4s"
        if not init_path.is_file():
            raise UserError(f"encoding produced no init segment for {rung.id} in {out}")
        init = parse_init(init_path.read_bytes(), f"{rung.id} init segment")
        staged = _staged_segments(stage, index)
        if not staged:
            raise UserError(f"encoding produced no media segments for {rung.id}")
        init_name, seg_names = _final_names(rung, len(staged))
        segments: list[dict[str, Any]] = []
        timing: list[tuple[float, float]] = []
        for name, path in zip(seg_names, staged, strict=True):
            info = parse_segment(path.read_bytes(), init, f"{rung.id} {name}")
            if not info.starts_with_sync_sample:
                raise UserError(f"{rung.id} {name}: does not start with a keyframe")
            start = round(info.base_decode_time / init.timescale, 6)
            duration = round(info.duration / init.timescale, 6)
            timing.append((start, duration))
            segments.append(
                {
                    "file": name,
                    "start_s": start,
                    "duration_s": duration,
                    "bytes": path.stat().st_size,
                }
            )
        if reference is None:
            reference = timing
        elif timing != reference:
            raise UserError(
                f"{rung.id}: segment boundaries differ from {settings.rungs[0].id}"
                " (renditions are not aligned)"
            )
        renditions.append(
            {
                "id": rung.id,
                "bitrate_bps": rung.bitrate_bps,
                "width": init.width,
                "height": init.height,
                "codec": init.codec,
                "mime": mime_for(init.codec),
                "init": {"file": init_name, "bytes": init_path.stat().st_size},
                "segments": segments,
            }
        )
    assert reference is not None
    return {
        "version": 1,
        "source": source,
        "duration_s": round(sum(d for _, d in reference), 6),
        "segment_seconds": float(settings.segment_seconds),
        "fps": round(float(settings.fps), 6),
        **({"chunk_frames": settings.chunk_frames} if settings.chunk_frames else {}),
        "renditions": renditions,
    }


def _publish(stage: Path, out: Path, settings: EncodeSettings) -> None:
    for index, rung in enumerate(settings.rungs):
        staged = _staged_segments(stage, index)
        init_name, seg_names = _final_names(rung, len(staged))
        (out / rung.id).mkdir(exist_ok=True)
        os.replace(stage / f"init-{index}.m4s", out / init_name)
        for name, path in zip(seg_names, staged, strict=True):
            os.replace(path, out / name)


# --- the two sources ---------------------------------------------------------------------


def _rendition_label(rung: Rung, codec: str) -> str:
    return f"{rung.id} {rung.width}x{rung.height} {codec}"


def synthesize(
    tools: Tools,
    out: Path,
    *,
    settings: EncodeSettings,
    duration_s: float,
    force: bool,
    report: Reporter,
) -> Manifest:
    """Synthetic moving pattern with burned-in frame number (text and binary code)."""
    if duration_s <= 0:
        raise UserError(f"--duration {duration_s:g}: must be greater than 0")
    canvas = max(settings.rungs, key=lambda r: r.height)
    head = ["format=yuv420p", *synth.burn_in_filters(canvas.height)]
    tails = [
        [
            f"scale={r.width}:{r.height}:flags=bicubic",
            "setsar=1",
            synth.label_filter(_rendition_label(r, settings.codec), r.height),
            "format=yuv420p",
        ]
        for r in settings.rungs
    ]
    graph, labels = filter_graph(head, tails)
    input_args = synth.synth_input_args(canvas.width, canvas.height, _num(settings.fps), duration_s)
    return encode(
        tools,
        out,
        settings=settings,
        input_args=input_args,
        graph=graph,
        labels=labels,
        source="synthetic",
        total_s=duration_s,
        force=force,
        report=report,
    )


def _fit(width: int, height: int) -> list[str]:
    """Scale into WxH keeping the aspect ratio, pad the rest black."""
    return [
        f"scale={width}:{height}:force_original_aspect_ratio=decrease:force_divisible_by=2",
        f"pad={width}:{height}:(ow-iw)/2:(oh-ih)/2:black",
        "setsar=1",
        "format=yuv420p",
    ]


def package_file(
    tools: Tools,
    source: Path,
    out: Path,
    *,
    settings: EncodeSettings,
    duration_s: float | None,
    burn_in: bool,
    force: bool,
    report: Reporter,
) -> Manifest:
    """A user's video file → the same renditions and manifest as `synthesize`."""
    if duration_s is not None and duration_s <= 0:
        raise UserError(f"--duration {duration_s:g}: must be greater than 0")
    info = probe_video(tools, source)
    report(
        f"input {source.name}: {info.codec} {info.width}x{info.height}"
        + (f", {info.duration_s:.1f} s" if info.duration_s else "")
    )
    total = info.duration_s
    if duration_s is not None:
        total = duration_s if total is None else min(total, duration_s)
    head = [f"fps={_num(settings.fps)}"]
    if burn_in:
        canvas = max(settings.rungs, key=lambda r: r.height)
        head += [*_fit(canvas.width, canvas.height), *synth.burn_in_filters(canvas.height)]
        tails = [
            [f"scale={r.width}:{r.height}:flags=bicubic", "setsar=1", "format=yuv420p"]
            for r in settings.rungs
        ]
    else:
        tails = [_fit(r.width, r.height) for r in settings.rungs]
    graph, labels = filter_graph(head, tails)
    # "file:" + absolute path: a name starting with "-" or containing ":" stays a file name.
    input_args = (["-t", f"{duration_s:g}"] if duration_s is not None else []) + [
        "-i",
        f"file:{source.resolve()}",
    ]
    return encode(
        tools,
        out,
        settings=settings,
        input_args=input_args,
        graph=graph,
        labels=labels,
        source=source.name,
        total_s=total,
        force=force,
        report=report,
    )

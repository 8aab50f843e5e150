"""End-to-end encodes of tiny clips (a few seconds, small sizes: the machine is shared)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pccstream.media import synth
from pccstream.media.ffmpeg import find_tools
from pccstream.media.ladder import parse_ladder
from pccstream.media.manifest import Manifest, load_manifest
from pccstream.media.mp4 import parse_init, parse_segment
from pccstream.media.package import (
    ENCODER_REVISION_NAME,
    made_by_this_encoder,
    make_settings,
    package_file,
    synthesize,
)

from .helpers import decode_gray, make_video, quiet, requires_ffmpeg

pytestmark = requires_ffmpeg


@pytest.fixture(scope="module")
def h264_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "media"
    settings = make_settings(parse_ladder("300k,750k"), "h264", "30", "1")
    synthesize(find_tools(), out, settings=settings, duration_s=2.5, force=False, report=quiet)
    return out


def test_synth_manifest_matches_schema_shape(h264_dir: Path) -> None:
    doc = json.loads((h264_dir / "manifest.json").read_text(encoding="utf-8"))
    assert doc["version"] == 1 and doc["source"] == "synthetic"
    assert doc["segment_seconds"] == 1.0 and doc["fps"] == 30.0
    assert doc["duration_s"] == pytest.approx(2.5)
    assert [r["bitrate_bps"] for r in doc["renditions"]] == [300_000, 750_000]
    for r in doc["renditions"]:
        assert set(r) == {
            "id",
            "bitrate_bps",
            "width",
            "height",
            "codec",
            "mime",
            "init",
            "segments",
        }
        assert r["mime"] == f'video/mp4; codecs="{r["codec"]}"'
        assert [s["duration_s"] for s in r["segments"]] == [1.0, 1.0, 0.5]
        assert [s["start_s"] for s in r["segments"]] == [0.0, 1.0, 2.0]


def test_renditions_aligned_and_every_segment_starts_with_keyframe(h264_dir: Path) -> None:
    m = load_manifest(h264_dir)
    assert [(r.width, r.height) for r in m.renditions] == [(426, 240), (640, 360)]
    for r in m.renditions:
        init = parse_init(r.init.path.read_bytes(), r.init.file)
        assert (init.width, init.height) == (r.width, r.height)
        for s in r.segments:
            info = parse_segment(s.path.read_bytes(), init, s.file)
            assert info.starts_with_sync_sample
            assert info.base_decode_time / init.timescale == pytest.approx(s.start_s)


def test_h264_codec_string_matches_ffprobe(h264_dir: Path) -> None:
    m = load_manifest(h264_dir)
    for r in m.renditions:
        data = r.init.path.read_bytes() + r.segments[0].path.read_bytes()
        probe = subprocess.run(
            [
                "ffprobe",
                "-v",
                "error",
                "-select_streams",
                "v:0",
                "-show_entries",
                "stream=profile,level",
                "-of",
                "json",
                "pipe:0",
            ],
            input=data,
            capture_output=True,
            check=True,
        )
        stream = json.loads(probe.stdout)["streams"][0]
        assert stream["profile"] == "High"
        assert r.codec == f"avc1.6400{stream['level']:02x}"


def test_burned_in_code_reads_back_frame_numbers(h264_dir: Path) -> None:
    m = load_manifest(h264_dir)
    low = m.renditions[0]  # 300 kbit/s at 240p: the hardest case for the code
    frames = decode_gray(low, 1, 6)
    assert [synth.read_frame_code(f) for f in frames] == [30, 31, 32, 33, 34, 35]
    frames = decode_gray(m.renditions[1], 2, 3)
    assert [synth.read_frame_code(f) for f in frames] == [60, 61, 62]


def test_reader_rejects_a_picture_without_code() -> None:
    import numpy as np

    assert synth.read_frame_code(np.full((240, 426), 128, dtype=np.uint8)) is None


def test_measured_bitrate_close_to_target(h264_dir: Path) -> None:
    for r in load_manifest(h264_dir).renditions:
        assert 0.8 * r.bitrate_bps < r.measured_bps < 1.25 * r.bitrate_bps


def test_no_rendition_runs_ahead_of_its_bitrate_by_more_than_a_chunk(h264_dir: Path) -> None:
    # A player starts after one chunk (0.2 s here); with the encoders' default 90 %-full
    # rate-control buffer these two renditions ran 0.32-0.37 s ahead.
    assert made_by_this_encoder(h264_dir)
    for r in load_manifest(h264_dir).renditions:
        assert r.lead_over_bitrate_s <= 0.2


def _single(tmp_path: Path, codec: str) -> Manifest:
    settings = make_settings(parse_ladder("300k"), codec, "30", "1")
    return synthesize(
        find_tools(), tmp_path / codec, settings=settings, duration_s=2, force=False, report=quiet
    )


@pytest.mark.parametrize(("codec", "prefix"), [("vp9", "vp09.00."), ("av1", "av01.0.")])
def test_other_codecs_in_cmaf(tmp_path: Path, codec: str, prefix: str) -> None:
    m = _single(tmp_path, codec)
    r = m.renditions[0]
    assert r.codec.startswith(prefix) and r.codec.endswith(".08")
    assert len(r.segments) == 2
    init = parse_init(r.init.path.read_bytes(), r.init.file)
    assert all(
        parse_segment(s.path.read_bytes(), init, s.file).starts_with_sync_sample for s in r.segments
    )
    assert synth.read_frame_code(decode_gray(r, 1, 1)[0]) == 30


def test_package_user_file_letterboxed_with_burn_in(tmp_path: Path) -> None:
    source = make_video(tmp_path / "in put.mp4", width=320, height=240, seconds=2)
    settings = make_settings(parse_ladder("300k"), "h264", "30", "1")
    m = package_file(
        find_tools(),
        source,
        tmp_path / "out",
        settings=settings,
        duration_s=None,
        burn_in=True,
        force=False,
        report=quiet,
    )
    r = m.renditions[0]
    assert m.source == "in put.mp4" and (r.width, r.height) == (426, 240)
    assert m.duration_s == pytest.approx(2.0)
    frame = decode_gray(r, 1, 1)[0]
    assert synth.read_frame_code(frame) == 30
    # 4:3 into 16:9: black bars left and right, below the code rows.
    assert frame[200:, :20].mean() < 30 and frame[200:, -20:].mean() < 30


def test_rerun_replaces_previous_output_only(tmp_path: Path) -> None:
    out = tmp_path / "media"
    settings = make_settings(parse_ladder("300k"), "h264", "30", "1")
    synthesize(find_tools(), out, settings=settings, duration_s=3, force=False, report=quiet)
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    synthesize(find_tools(), out, settings=settings, duration_s=1, force=False, report=quiet)
    assert sorted(p.name for p in (out / "300k").iterdir()) == ["init.mp4", "seg-00000.m4s"]
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    # No staging directory is left; the only dot file is the encoder's revision.
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == [ENCODER_REVISION_NAME]


def test_failed_encode_leaves_no_staging_and_no_manifest(tmp_path: Path) -> None:
    from pccstream.errors import UserError
    from pccstream.media.package import encode

    out = tmp_path / "media"
    settings = make_settings(parse_ladder("300k"), "h264", "30", "1")
    with pytest.raises(UserError) as info:
        encode(
            find_tools(),
            out,
            settings=settings,
            input_args=["-f", "lavfi", "-i", "testsrc2=duration=1"],
            graph="[0:v:0]nosuchfilter[v0]",
            labels=["[v0]"],
            source="synthetic",
            total_s=1,
            force=False,
            report=quiet,
        )
    message = str(info.value)
    assert message == "encoding synthetic failed: ffmpeg: No such filter: 'nosuchfilter'"
    assert list(out.iterdir()) == []

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pccstream.media.manifest import ManifestError, load_manifest
from pccstream.media.mp4 import codec_string


def _write_media(root: Path, renditions: int = 2, segments: int = 3) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "version": 1,
        "source": "synthetic",
        "duration_s": 2.0 * segments,
        "segment_seconds": 2.0,
        "fps": 30.0,
        "renditions": [],
    }
    for r in range(renditions):
        rid = f"{(r + 1) * 300}k"
        (root / rid).mkdir()
        (root / rid / "init.mp4").write_bytes(b"i" * (10 + r))
        segs = []
        for s in range(segments):
            name = f"{rid}/seg-{s:05d}.m4s"
            (root / name).write_bytes(b"s" * (100 + s))
            segs.append({"file": name, "start_s": 2.0 * s, "duration_s": 2.0, "bytes": 100 + s})
        doc["renditions"].append(
            {
                "id": rid,
                "bitrate_bps": (r + 1) * 300_000,
                "width": 640,
                "height": 360,
                "codec": "avc1.64001e",
                "mime": 'video/mp4; codecs="avc1.64001e"',
                "init": {"file": f"{rid}/init.mp4", "bytes": 10 + r},
                "segments": segs,
            }
        )
    _save(root, doc)
    return doc


def _save(root: Path, doc: dict[str, Any]) -> None:
    (root / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")


def test_load_valid(tmp_path: Path) -> None:
    _write_media(tmp_path)
    m = load_manifest(tmp_path)
    assert m.version == 1 and m.fps == 30.0 and m.segment_count == 3
    assert [r.index for r in m.renditions] == [0, 1]
    r = m.renditions[1]
    assert r.id == "600k" and r.init.bytes == 11 and r.init.path == tmp_path.resolve() / r.init.file
    assert r.segments[2].index == 2 and r.segments[2].start_s == 4.0
    assert r.segments[2].path.read_bytes() == b"s" * 102
    assert m.json_bytes == (tmp_path / "manifest.json").read_bytes()
    assert m.renditions[0].measured_bps == pytest.approx((100 + 101 + 102) * 8 / 6)


def _mutate(root: Path, change: Any) -> None:
    doc = _write_media(root)
    change(doc)
    _save(root, doc)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.update(version=2), "version: unsupported version 2"),
        (lambda d: d.pop("duration_s"), "duration_s: missing"),
        (lambda d: d.update(segment_seconds=0), "segment_seconds: must be greater than 0"),
        (
            lambda d: d["renditions"][1].update(width="640"),
            "renditions[1].width: expected an integer",
        ),
        (lambda d: d["renditions"][1].update(bitrate_bps=True), "renditions[1].bitrate_bps"),
        (
            lambda d: d["renditions"][1].update(bitrate_bps=300_000),
            "renditions[1].bitrate_bps: 300000 is not above",
        ),
        (lambda d: d["renditions"][1].update(id="300k"), "renditions[1].id: duplicate id"),
        (
            lambda d: d["renditions"][0]["segments"][1].update(bytes=5),
            "renditions[0].segments[1].bytes: '300k/seg-00001.m4s' has 101 bytes, manifest says 5",
        ),
        (
            lambda d: d["renditions"][0]["segments"][2].update(file="../outside.m4s"),
            "renditions[0].segments[2].file: '../outside.m4s' is outside the media directory",
        ),
        (
            lambda d: d["renditions"][0]["segments"][2].update(file="/etc/passwd"),
            "must be a relative path",
        ),
        (
            lambda d: d["renditions"][0]["init"].update(file="300k/nope.mp4"),
            "renditions[0].init.file: '300k/nope.mp4' does not exist",
        ),
        (lambda d: d["renditions"][1]["segments"].pop(), "renditions[1].segments: has 2 segments"),
        (
            lambda d: d["renditions"][0]["segments"][0].pop("start_s"),
            "renditions[0].segments[0].start_s: missing",
        ),
        (lambda d: d.update(renditions=[]), "renditions: expected a non-empty array"),
        (lambda d: d["renditions"][0].update(mime="video/mp4"), "renditions[0].mime"),
    ],
)
def test_bad_field_named_with_json_path(tmp_path: Path, change: Any, expected: str) -> None:
    _mutate(tmp_path, change)
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "manifest.json") in message
    assert expected in message
    assert "\n" not in message


def test_symlink_escape_refused(tmp_path: Path) -> None:
    media = tmp_path / "media"
    media.mkdir()
    doc = _write_media(media)
    (tmp_path / "secret").write_bytes(b"s" * 100)
    target = media / "300k" / "seg-00000.m4s"
    target.unlink()
    target.symlink_to(tmp_path / "secret")
    _save(media, doc)
    with pytest.raises(ManifestError, match="outside the media directory"):
        load_manifest(media)


def test_missing_and_malformed_manifest(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="manifest.json: not found"):
        load_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text('{"version": 1,', encoding="utf-8")
    with pytest.raises(ManifestError, match=r"manifest.json: line 1 column \d+: invalid JSON"):
        load_manifest(tmp_path)
    with pytest.raises(ManifestError, match="media directory not found"):
        load_manifest(tmp_path / "absent")


def test_codec_strings_from_configuration_boxes() -> None:
    assert codec_string("avc1", bytes([1, 0x64, 0x00, 0x1F, 0xFF])) == "avc1.64001f"
    # vpcC: version/flags, profile 0, level 31, bitDepth 8 (0x8_ << 4 | chroma/range bits)
    assert codec_string("vp09", bytes([1, 0, 0, 0, 0, 31, 0x82, 2, 2, 2, 0, 0])) == (
        "vp09.00.31.08"
    )
    # av1C: marker|version, profile 0 / level 8, main tier 8-bit; 10-bit high tier
    assert codec_string("av01", bytes([0x81, 0x08, 0x0C, 0])) == "av01.0.08M.08"
    assert codec_string("av01", bytes([0x81, 0x2D, 0xCC, 0])) == "av01.1.13H.10"


def test_lead_over_bitrate_is_the_most_a_prefix_runs_ahead() -> None:
    from pccstream.media.manifest import InitSegment, Rendition, Segment

    def rendition(mbit_per_segment: list[float]) -> Rendition:
        segments = tuple(
            Segment(i, f"s{i}", Path(f"s{i}"), 2.0 * i, 2.0, round(mbit * 1e6 / 8))
            for i, mbit in enumerate(mbit_per_segment)
        )
        return Rendition(0, "15000k", 15_000_000, 1920, 1080, "avc1.640028", "video/mp4",
                         InitSegment("init", Path("init"), 800), segments)

    # 16.5 then 15 Mbit/s for 2 s each: 4.2 s of bitrate by 4 s; then 12 Mbit/s.
    assert rendition([33.0, 30.0, 24.0]).lead_over_bitrate_s == pytest.approx(0.2)
    assert rendition([24.0, 30.0, 42.0]).lead_over_bitrate_s == pytest.approx(0.4)  # at the end
    assert rendition([30.0, 29.0]).lead_over_bitrate_s == 0.0

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pccstream.errors import UserError
from pccstream.media import recipes


def test_the_shipped_recipes_are_the_bootstraps_media():
    shipped = recipes.load_recipes()
    assert set(shipped) >= {"default", "live"}
    live = shipped["live"]
    assert (live.duration_s, live.segment_seconds, live.chunk_frames) == (60.0, "0.5", 1)
    assert live.ladder == "300k,750k,1500k,2000k,2500k,3000k"
    assert live.vbv_frames == 2 and shipped["default"].vbv_frames == 0
    assert shipped["default"].duration_s == 30.0


def test_a_bad_recipe_is_one_clear_line(tmp_path: Path, monkeypatch):
    bad = tmp_path / "recipes.toml"
    bad.write_text('[x]\nduration = 4\nbitrate = "3M"\n')
    with pytest.raises(UserError, match=r"\[x\]: needs duration.*unknown bitrate"):
        recipes.load_recipes(bad)
    with pytest.raises(UserError, match="media recipe 'nope': expected one of"):
        recipes.recipe("nope")


def test_named_media_is_made_once_on_first_use(tmp_path: Path, monkeypatch):
    made: list[Path] = []

    def fake_make(name: str, out: Path, *, force: bool) -> None:
        out.mkdir(parents=True)
        (out / "manifest.json").write_text(json.dumps({"name": name}))
        recipes.stamp(name, out)
        made.append(out)

    monkeypatch.setattr(recipes, "media_root", lambda: tmp_path / "media")
    monkeypatch.setattr(recipes, "make", fake_make)
    first = recipes.ensure_named_media("live")
    assert first == tmp_path / "media" / "live" and made == [first]
    assert recipes.ensure_named_media("live") == first and len(made) == 1  # reused


def test_default_recipe_makes_chunked_vod_and_live_keeps_one_frame_chunks() -> None:
    from pccstream.media.recipes import recipe

    assert recipe("default").chunk_frames is None  # media synth's 0.2 s VOD chunks
    assert recipe("live").chunk_frames == 1


def test_the_fingerprint_follows_every_recipe_key(tmp_path: Path) -> None:
    base = tmp_path / "base.toml"
    base.write_text('[live]\nduration = 60\nsegment_seconds = 0.5\nchunk_frames = 1\n')
    changed = tmp_path / "changed.toml"
    changed.write_text(
        '[live]\nduration = 60\nsegment_seconds = 0.5\nchunk_frames = 1\nvbv_frames = 2\n'
    )
    a = recipes.load_recipes(base)["live"].fingerprint()
    assert a == recipes.load_recipes(base)["live"].fingerprint()  # stable
    assert a != recipes.load_recipes(changed)["live"].fingerprint()


def test_media_from_an_older_recipe_is_made_again(tmp_path: Path, monkeypatch):
    made: list[Path] = []

    def fake_make(name: str, out: Path, *, force: bool) -> None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "manifest.json").write_text(json.dumps({"name": name}))
        recipes.stamp(name, out)
        made.append(out)

    monkeypatch.setattr(recipes, "media_root", lambda: tmp_path / "media")
    monkeypatch.setattr(recipes, "make", fake_make)
    out = tmp_path / "media" / "live"
    out.mkdir(parents=True)
    (out / "manifest.json").write_text("{}")  # made before fingerprints: stale
    assert not recipes.is_current("live", out)
    recipes.ensure_named_media("live")
    assert made == [out] and recipes.is_current("live", out)
    (out / recipes.FINGERPRINT_NAME).write_text("0123456789abcdef\n")  # another recipe
    assert not recipes.is_current("live", out)
    recipes.ensure_named_media("live")
    assert len(made) == 2 and recipes.is_current("live", out)


def test_the_live_rate_control_buffer_is_two_frames_of_bitrate() -> None:
    from pccstream.media.ladder import parse_ladder
    from pccstream.media.package import encoder_args, make_settings

    live = recipes.recipe("live")
    settings = make_settings(
        parse_ladder("2500k"), "h264", "30", "0.5", live.chunk_frames, live.vbv_frames
    )
    args = encoder_args(settings)
    assert args[args.index("-bufsize:v:0") + 1] == str(round(2_500_000 * 2 / 30))
    vod = encoder_args(make_settings(parse_ladder("2500k"), "h264", "30", "2"))
    assert vod[vod.index("-bufsize:v:0") + 1] == "2500000"  # VOD unchanged: one second
    with pytest.raises(UserError, match="--vbv-frames 16"):
        make_settings(parse_ladder("2500k"), "h264", "30", "0.5", 1, 16)


def test_a_chunked_vod_rate_control_buffer_starts_at_one_chunk() -> None:
    from pccstream.media.ladder import parse_ladder
    from pccstream.media.package import encoder_args, make_settings

    def start(codec: str, segment: str, chunk: int | None, vbv: int = 0) -> str | None:
        args = encoder_args(make_settings(parse_ladder("2500k"), codec, "30", segment, chunk, vbv))
        flag = "-rc_init_occupancy:v:0"
        return args[args.index(flag) + 1] if flag in args else None

    assert start("h264", "2", None) == str(2_500_000 * 6 // 30)  # 6-frame chunks
    assert start("vp9", "2", 3) == str(2_500_000 * 3 // 30)
    assert start("h264", "2", 0) is None  # whole segments: the player starts after one
    assert start("h264", "0.5", 1, 2) is None  # live: its buffer is two frames already

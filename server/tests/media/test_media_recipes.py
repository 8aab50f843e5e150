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
    assert live.ladder == "300k,750k,1500k,2500k,3000k" and shipped["default"].duration_s == 30.0


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

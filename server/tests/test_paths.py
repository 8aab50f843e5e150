"""One place resolves pccstream's files: the installed package's copy, else the checkout's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pccstream import paths
from pccstream.errors import UserError
from tests.checkout import REPO_ROOT


def test_a_checkout_reads_its_own_files():
    assert paths.checkout_root() == REPO_ROOT
    assert paths.data_path(paths.SCENARIOS) == REPO_ROOT / "infra" / "scenarios"
    assert (paths.data_path(paths.CONTRACTS) / "player.json").is_file()
    assert paths.data_path(paths.MEDIA_RECIPES).is_file()
    assert paths.media_root() == REPO_ROOT / "media"


def test_the_packaged_copy_wins_and_nothing_is_one_clear_line(tmp_path: Path, monkeypatch):
    packaged = tmp_path / "infra" / "scenarios"
    packaged.mkdir(parents=True)
    monkeypatch.setattr(
        paths, "_packaged", lambda rel: tmp_path / rel if (tmp_path / rel).exists() else None
    )
    assert paths.data_path(paths.SCENARIOS) == packaged
    assert paths.data_path(paths.TRACES) == REPO_ROOT / "infra" / "traces"  # checkout fallback
    monkeypatch.setattr(paths, "checkout_root", lambda: None)
    with pytest.raises(UserError, match="infra/traces: not in the installed package"):
        paths.data_path(paths.TRACES)


def test_caches_outside_a_checkout_are_per_user(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(paths, "checkout_root", lambda: None)
    monkeypatch.delenv("PCCSTREAM_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert paths.cache_dir() == tmp_path / "pccstream"
    assert paths.media_root() == tmp_path / "pccstream" / "media"
    monkeypatch.setenv("PCCSTREAM_CACHE", str(tmp_path / "c"))
    assert paths.cache_dir() == tmp_path / "c"


def test_no_module_computes_a_path_from_its_place_in_the_checkout():
    pattern = re.compile(r"\.parents\[\d+\]|\.parent\.parent")
    offenders = [
        str(p.relative_to(REPO_ROOT))
        for p in (REPO_ROOT / "server").rglob("*.py")
        if p.name != "test_paths.py" and pattern.search(p.read_text())
    ]
    assert offenders == []


def test_a_web_build_older_than_its_sources_is_one_clear_line(tmp_path: Path):
    import os

    (tmp_path / "web" / "src").mkdir(parents=True)
    (tmp_path / "web" / "dist").mkdir()
    source = tmp_path / "web" / "src" / "player.ts"
    test = tmp_path / "web" / "src" / "player.test.ts"
    built = tmp_path / "web" / "dist" / "index.html"
    for path in (source, test, built):
        path.write_text("x")
    os.utime(source, (100, 100))
    os.utime(built, (200, 200))
    os.utime(test, (300, 300))  # tests are not in the bundle
    assert paths.stale_web_build(tmp_path) is None
    os.utime(source, (300, 300))
    message = paths.stale_web_build(tmp_path)
    assert message is not None and "\n" not in message
    assert message.startswith("web/dist is older than web/src/player.ts: rebuild it")
    built.unlink()  # no build at all is data_path's error, not this one
    assert paths.stale_web_build(tmp_path) is None


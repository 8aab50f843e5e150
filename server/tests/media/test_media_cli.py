"""The commands' error handling: one line on stderr, exit status 2, nothing half-written."""

from __future__ import annotations

from pathlib import Path

import pytest

from pccstream import cli
from pccstream.media.package import ENCODER_REVISION, ENCODER_REVISION_NAME

from .helpers import make_video, requires_ffmpeg


@pytest.fixture(autouse=True)
def only_media(monkeypatch: pytest.MonkeyPatch) -> None:
    # Other capabilities are built in parallel; test the real `main` with media alone.
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("pccstream.media.cli",))


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pccstream: error: ") and "\n" not in err
    return err


def test_missing_ffmpeg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    err = _error(capsys, "media", "synth", "--out", str(tmp_path / "m"), "--duration", "1")
    assert "ffmpeg not found" in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--ladder", "300k,300x"], "item 2: bad bitrate '300x'"),
        (["--ladder", ""], "bad ladder ''"),
        (["--ladder", "0"], "bad bitrate '0'"),
        (["--ladder", "300k,300k"], "duplicates '300k'"),
        (["--duration", "0"], "--duration 0: must be a positive"),
        (["--duration", "-3"], "--duration -3"),
        (["--duration", "abc"], "--duration 'abc': not a number"),
        (["--segment-seconds", "0"], "--segment-seconds 0: must be greater than 0"),
        (["--segment-seconds", "1.05"], "whole number of frames"),
        (["--fps", "0"], "--fps 0"),
    ],
)
def test_bad_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    out = tmp_path / "m"
    err = _error(capsys, "media", "synth", "--out", str(out), *argv)
    assert expected in err
    assert not out.exists()


@requires_ffmpeg
def test_non_empty_out_refused_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "holiday.jpg").write_bytes(b"x")
    err = _error(capsys, "media", "synth", "--out", str(tmp_path), "--duration", "1")
    assert "not empty" in err and "--force" in err
    assert (
        cli.main(
            [
                "media",
                "synth",
                "--out",
                str(tmp_path),
                "--duration",
                "1",
                "--ladder",
                "300k",
                "--segment-seconds",
                "1",
                "--force",
            ]
        )
        == 0
    )
    assert (tmp_path / "holiday.jpg").exists() and (tmp_path / "manifest.json").exists()
    assert cli.main(["media", "info", str(tmp_path)]) == 0
    assert "300k" in capsys.readouterr().out


@requires_ffmpeg
def test_package_unreadable_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.mp4"
    err = _error(capsys, "media", "package", str(missing), "--out", str(tmp_path / "o"))
    assert f"{missing}: input file not found" in err
    text = tmp_path / "notes.mp4"
    text.write_text("not a video", encoding="utf-8")
    err = _error(capsys, "media", "package", str(text), "--out", str(tmp_path / "o"))
    assert f"{text}: not a readable video" in err


@requires_ffmpeg
def test_package_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = make_video(tmp_path / "clip.mp4", width=320, height=180, seconds=2)
    out = tmp_path / "o"
    assert (
        cli.main(
            [
                "media",
                "package",
                str(source),
                "--out",
                str(out),
                "--ladder",
                "300k",
                "--segment-seconds",
                "1",
                "--duration",
                "1",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "300k: 426x240 avc1." in err and "wrote" in err
    assert (out / "300k" / "seg-00000.m4s").is_file()


def test_info_on_missing_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _error(capsys, "media", "info", str(tmp_path))
    assert "manifest.json: not found" in err


def test_recipe_if_stale_and_stamp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pccstream.media import recipes

    made: list[str] = []

    def fake_make(name: str, out: Path, *, force: bool) -> None:
        (out / "manifest.json").write_text("{}")
        (out / ENCODER_REVISION_NAME).write_text(f"{ENCODER_REVISION}\n")
        recipes.stamp(name, out)
        made.append(name)

    monkeypatch.setattr(recipes, "make", fake_make)
    out = tmp_path / "live"
    out.mkdir()
    err = _error(capsys, "media", "recipe", "live", "--out", str(out), "--stamp")
    assert "no manifest.json there to stamp" in err
    argv = ["media", "recipe", "live", "--out", str(out), "--force", "--if-stale"]
    assert cli.main(argv) == 0 and made == ["live"]  # no fingerprint: made
    assert cli.main(argv) == 0 and made == ["live"]  # current: kept
    (out / recipes.FINGERPRINT_NAME).unlink()
    (out / ENCODER_REVISION_NAME).write_text("1\n")
    capsys.readouterr()
    err = _error(capsys, "media", "recipe", "live", "--out", str(out), "--stamp")
    assert "written by an older encoder" in err and "make it again without --stamp" in err
    (out / ENCODER_REVISION_NAME).write_text(f"{ENCODER_REVISION}\n")
    assert cli.main(["media", "recipe", "live", "--out", str(out), "--stamp"]) == 0
    assert recipes.is_current("live", out) and made == ["live"]

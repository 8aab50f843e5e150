import asyncio
import io
import subprocess
from pathlib import Path

import pytest

from pccstream.ab import cli as ab_cli
from pccstream.ab.design import Design, schedule
from pccstream.ab.experiment import run_experiment
from pccstream.ab.progress import Progress, estimate_eta, format_duration
from pccstream.ab.store import Store
from pccstream.cli import build_parser, main
from pccstream.media.package import ENCODER_REVISION, ENCODER_REVISION_NAME

from .fakes import FakeRunner


def test_unknown_arm_exits_2_with_the_valid_names(tmp_path: Path, capsys):
    db = tmp_path / "r.sqlite"
    code = main(["ab", "--cc", "vivace,nosuch", "--scenario", "video-rttflap", "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2
    assert "nosuch" in err and "cubic" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ab", "--cc", "cubic"], "--scenario"),
        (["ab", "--scenario", "video-rttflap"], "--cc"),
        (["ab", "--cc", "cubic", "--scenario", "nope"], "unknown scenario"),
        (["ab", "--cc", "cubic", "--scenario", "video-rttflap", "--runs", "0"], "--runs"),
        (
            ["ab", "--cc", "cubic", "--scenario", "video-rttflap", "--param", "x"],
            "KEY=VALUE",
        ),
        (
            ["ab", "--cc", "cubic", "--scenario", "video-rttflap", "--media", "/nonexistent"],
            "--media",
        ),
        (["report", "/nonexistent.sqlite"], "no such results database"),
        (["ab", "--cc", "cubic", "--scenario", "video-rttflap", "--max-load", "0"], "--max-load"),
        (["ab", "export", "--db", "/nonexistent.sqlite"], "no such results database"),
    ],
)
def test_bad_input_exits_2(tmp_path: Path, capsys, argv, message, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_design_from_args_fills_the_scenario_and_ladder():
    args = build_parser().parse_args(
        [
            "ab",
            "--cc",
            "vivace,cubic",
            "--scenario",
            "video-3viewers",
            "--viewers",
            "3",
            "--bitrate",
            "1500",
            "--runs",
            "2",
            "--duration",
            "30",
        ]
    )
    design = ab_cli.design_from_args(args)
    assert design.arms == ("vivace", "cubic")
    assert design.scenario_params == {"bitrate_kbps": "1500", "viewers": "3"}
    assert design.ladder == (1500,) and design.bitrate_kbps == 1500
    assert (
        design.scenario_label
        == "video-3viewers:bitrate_kbps=1500,viewers=3 @ 1500 kbit/s x3 viewers"
    )


def _cached_media(root: Path, *, stamped: bool) -> Path:
    media = root / "media" / "750k-40s"
    media.mkdir(parents=True)
    (media / "manifest.json").write_text(
        '{"duration_s": 40, "chunk_frames": 6, "renditions": [{"bitrate_bps": 750000}]}'
    )
    if stamped:
        (media / ENCODER_REVISION_NAME).write_text(f"{ENCODER_REVISION}\n")
    return media


def _encodes(monkeypatch) -> list[list[str]]:
    """Record the encodes `media_for_ladder` would start instead of running them."""
    commands: list[list[str]] = []

    def fake_run(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        commands.append(command)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(ab_cli.subprocess, "run", fake_run)
    return commands


_DESIGN_750K = Design(
    arms=("cubic",), scenario="video-rttflap", bitrate_kbps=750, ladder=(750,), duration_s=30
)


def test_media_is_found_in_the_cache(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PCCSTREAM_CACHE", str(tmp_path))
    monkeypatch.setattr(ab_cli, "named_media", lambda name: tmp_path / name)  # none here
    media = _cached_media(tmp_path, stamped=True)
    encodes = _encodes(monkeypatch)
    assert ab_cli.find_or_make_media(_DESIGN_750K, None) == media
    assert encodes == []


def test_cached_media_from_an_older_encoder_is_made_again(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PCCSTREAM_CACHE", str(tmp_path))
    monkeypatch.setattr(ab_cli, "named_media", lambda name: tmp_path / name)
    media = _cached_media(tmp_path, stamped=False)
    encodes = _encodes(monkeypatch)
    assert ab_cli.find_or_make_media(_DESIGN_750K, None) == media
    assert len(encodes) == 1 and encodes[0][-1] == "--force" and str(media) in encodes[0]


def test_export_and_resume_of_the_last_unfinished_experiment(tmp_path: Path, capsys):
    db = tmp_path / "r.sqlite"
    design = Design(arms=("vivace", "cubic"), scenario="video-rttflap", runs=2, duration_s=5.0)
    with Store(db) as store:
        progress = Progress(len(schedule(design)), 0, 1.0, stream=io.StringIO())
        with pytest.raises(RuntimeError):
            asyncio.run(run_experiment(store, design, FakeRunner(crash_after=1), progress=progress))
        assert ab_cli._latest_unfinished(store) == design
    out = tmp_path / "runs.csv"
    assert main(["ab", "export", "--db", str(db), "--out", str(out)]) == 0
    assert out.read_text().count("\n") == 2


def test_progress_and_eta():
    assert format_duration(59) == "59s" and format_duration(61) == "1m01s"
    assert format_duration(3700) == "1h01m"
    assert estimate_eta(3, [], 10.0) == 30.0
    assert estimate_eta(3, [20.0, 40.0], 10.0, elapsed_current=5.0) == 85.0
    stream = io.StringIO()
    progress = Progress(2, 0, 10.0, stream=stream)
    progress.start_run("block 1/1 cubic")
    progress.finish_run("ok")
    progress.start_run("block 1/1 vivace")
    progress.finish_run("ok")
    progress.close()
    text = stream.getvalue()
    assert "0/2 runs" in text and "ETA" in text and "2/2 runs done" in text


def test_progress_of_runs_arriving_from_parallel_workers():
    stream = io.StringIO()
    progress = Progress(4, 0, 10.0, stream=stream)
    progress.parallel = 2
    progress.set_label("2 block(s) queued or running")
    progress.run_arrived("block 1/2 cubic on node-1", "ok", 12.0)
    assert "1/4 runs" in stream.getvalue() and "ETA 18s" in stream.getvalue()  # 3 x 12 / 2
    assert "block 1/2 cubic on node-1: ok (12.0 s)" in stream.getvalue()

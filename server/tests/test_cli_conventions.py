"""The CLI conventions (README, "CLI conventions"): exit statuses, one flag name per thing,
kbit/s bitrates with k/M, deprecated spellings that still work and warn, `--json` purity,
and `ab export` carrying the whole design and the per-segment records."""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pccstream.ab.design import Design, Slot, schedule
from pccstream.ab.experiment import run_experiment
from pccstream.ab.store import Store
from pccstream.cli import build_parser, main
from pccstream.cli_conventions import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    parse_kbps,
    parse_kbps_list,
    run_command,
)
from pccstream.errors import Interrupted, RunError, UserError
from pccstream.webrtc.cli import call_bitrate_kbps

from .ab.fakes import FakeRunner, fake_record

# -- bitrates -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kbps"),
    [("750", 750), ("750k", 750), ("2500K", 2500), ("15M", 15000), ("2.5M", 2500), ("1.5m", 1500)],
)
def test_bitrates_are_kbps_with_k_and_m_suffixes(text: str, kbps: int) -> None:
    assert parse_kbps(text) == kbps


@pytest.mark.parametrize("text", ["", "abc", "0", "-5", "1.5", "15G", "15 Mbit", "nan"])
def test_bad_bitrates_are_one_line_naming_the_flag(text: str) -> None:
    with pytest.raises(UserError) as info:
        parse_kbps(text, "--bitrate")
    assert str(info.value).startswith(f"--bitrate {text!r}") and "\n" not in str(info.value)


def test_bitrate_lists() -> None:
    assert parse_kbps_list("300k,1.5M,3000", "--ladder") == (300, 1500, 3000)
    with pytest.raises(UserError, match="item 2 '3M' is listed twice"):
        parse_kbps_list("3000,3M", "--ladder")


def test_the_same_bitrate_flag_everywhere() -> None:
    parser = build_parser()
    ab = parser.parse_args(["ab", "--cc", "cubic", "--scenario", "x", "--bitrate", "15M"])
    assert ab.bitrate == 15000
    demo = parser.parse_args(["demo", "--bitrate", "2500k"])
    assert demo.bitrate == 2500
    sustain = parser.parse_args(["bench", "sustain", "--bitrates", "15M,30000k"])
    from pccstream.bench.sustain import parse_bitrates

    assert parse_bitrates(sustain.bitrates) == (15000, 30000)
    call = parser.parse_args(["webrtc", "call", "--bitrate", "2.5M"])
    assert call_bitrate_kbps(call.bitrate) == 2500


def test_the_same_flag_names_for_controllers_scenario_parameters_and_log_dirs() -> None:
    parser = build_parser()
    for argv in (
        ["ab", "--cc", "vivace,cubic", "--scenario", "s", "--param", "k=v", "--log-dir", "d"],
        ["bench", "transfer", "--cc", "vivace,cubic", "--scenario", "s", "--param", "k=v",
         "--log-dir", "d"],
        ["bench", "leaderboard", "--cc", "vivace,cubic", "--scenario", "s", "--param", "k=v",
         "--log-dir", "d"],
        ["demo", "--cc", "vivace,cubic", "--scenario", "s", "--param", "k=v"],
    ):
        args = parser.parse_args(argv)
        assert args.cc == "vivace,cubic" and args.scenario == "s", argv
        assert args.param == [("k", "v")], argv
        if "--log-dir" in argv:
            assert args.log_dir == Path("d"), argv
    call = parser.parse_args(["webrtc", "call", "--scenario", "s", "--param", "k=v"])
    assert call.param == [("k", "v")]
    emulate = parser.parse_args(["emulate", "--scenario", "s", "--param", "k=v"])
    assert emulate.param == [("k", "v")]


# -- deprecated spellings -------------------------------------------------------------------


def _warned(capsys: pytest.CaptureFixture[str], old: str, new: str) -> None:
    err = capsys.readouterr().err
    assert f"pccstream: warning: {old} is deprecated" in err and f"use {new}" in err


def test_old_spellings_still_work_and_warn(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    args = parser.parse_args(["ab", "--arms", "vivace,cubic", "--scenario", "s"])
    assert args.cc == "vivace,cubic"
    _warned(capsys, "--arms", "--cc")
    args = parser.parse_args(
        ["ab", "--cc", "c", "--scenario", "s", "--scenario-param", "a=1", "--param", "b=2"]
    )
    assert args.param == [("a", "1"), ("b", "2")]
    _warned(capsys, "--scenario-param", "--param")
    args = parser.parse_args(["ab", "--cc", "c", "--scenario", "s", "--keep-logs", "logs"])
    assert args.log_dir == Path("logs")
    _warned(capsys, "--keep-logs", "--log-dir")
    args = parser.parse_args(["demo", "--compare", "vivace,cubic"])
    assert args.cc == "vivace,cubic"
    _warned(capsys, "--compare", "--cc A,B")


def test_a_bad_value_for_an_old_spelling_is_still_exit_2(capsys: pytest.CaptureFixture[str]):
    assert main(["ab", "--cc", "c", "--scenario", "s", "--scenario-param", "nokey"]) == EXIT_USAGE
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_webrtc_call_bitrate_moves_from_bps_to_kbps_safely(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Only the old unit makes sense: converted, with a warning naming the new spelling.
    assert call_bitrate_kbps("2500000") == 2500
    err = capsys.readouterr().err
    assert "bit/s is deprecated" in err and "--bitrate 2500k" in err
    # Fits both units (40 kbit/s in the old one, 40 Mbit/s in the new one): refused, not guessed.
    with pytest.raises(UserError, match="ambiguous .* write 40000k .* or 40k"):
        call_bitrate_kbps("40000")
    assert call_bitrate_kbps("40000k") == 40000 and call_bitrate_kbps("40k") == 40
    assert call_bitrate_kbps("750") == 750
    assert capsys.readouterr().err == ""
    for bad in ("20", "60M", "80000000"):
        with pytest.raises(UserError, match="--bitrate"):
            call_bitrate_kbps(bad)


# -- exit statuses --------------------------------------------------------------------------


def _raising(exc: BaseException) -> argparse.Namespace:
    def func(_: argparse.Namespace) -> int:
        raise exc

    return argparse.Namespace(func=func)


def test_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["emulate", "scenarios", "--names"]) == EXIT_OK
    assert main(["emulate", "--no-such-flag"]) == EXIT_USAGE
    assert main(["ab", "--cc", "cubic", "--scenario", "nosuch"]) == EXIT_USAGE
    capsys.readouterr()
    assert run_command(_raising(UserError("bad"))) == EXIT_USAGE
    assert run_command(_raising(RunError("the browser crashed"))) == EXIT_FAILED
    assert run_command(_raising(Interrupted("3 runs kept"))) == EXIT_INTERRUPTED
    assert run_command(_raising(KeyboardInterrupt())) == EXIT_INTERRUPTED
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "pccstream: error: bad",
        "pccstream: failed: the browser crashed",
        "pccstream: interrupted: 3 runs kept",
        "pccstream: interrupted",
    ]


def test_sigint_exits_130_and_keeps_the_log(tmp_path: Path) -> None:
    """A cheap long-running command: the relay. Ctrl-C stops it with 130 and its log is
    complete up to the stop (every packet relayed before it is in the log)."""
    log = tmp_path / "relay.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pccstream.cli", "emulate", "--listen", "127.0.0.1:0",
         "--upstream", "127.0.0.1:9", "--down", "12mbit", "--up", "12mbit", "--log", str(log)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "listening on 127.0.0.1:PORT -> ..."
        port = int(line.split()[2].rsplit(":", 1)[1])
        import socket

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            for _ in range(5):
                client.sendto(b"x" * 100, ("127.0.0.1", port))
        # The relay flushes its log every second: wait until the packets are in it.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and log.read_text().count(" u + 128\n") < 5:
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert f"pccstream: interrupted: the log {log} is complete up to the stop" in err
    text = log.read_text()
    assert text.startswith("# pccstream-emulator-log 1")
    assert text.count(" u + 128\n") == 5  # 100 bytes + 28 of UDP/IPv4 headers, each kept


def test_an_interrupted_experiment_keeps_its_runs_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pccstream ab` stopped by Ctrl-C after its first run: 130, the run stays stored."""
    from pccstream.ab import cli as ab_cli
    from pccstream.ab import experiment, runner

    class InterruptAfterOne(FakeRunner):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__()

        async def start(self) -> None:
            pass

        async def close(self) -> None:
            pass

        async def run(self, design: Design, slot: Slot) -> dict[str, Any]:
            if self.ran:
                raise KeyboardInterrupt
            return await super().run(design, slot)

    monkeypatch.setattr(runner, "BrowserRunner", InterruptAfterOne)
    monkeypatch.setattr(ab_cli, "find_or_make_media", lambda design, explicit: tmp_path)
    assert experiment.run_experiment  # the real experiment loop runs
    db = tmp_path / "r.sqlite"
    code = main(["ab", "--cc", "vivace,cubic", "--scenario", "video-rttflap", "--runs", "2",
                 "--duration", "5", "--db", str(db)])
    assert code == EXIT_INTERRUPTED
    assert f"completed runs are stored in {db}, continue with --resume" in capsys.readouterr().err
    with Store(db) as store:
        assert len(store.runs()) == 1


# -- --json ---------------------------------------------------------------------------------


def _fake_transfer(settings: Any, progress: Any) -> dict[str, Any]:
    progress("run 1/1: vivace on s for 1 s")
    median = {"throughput_mbps": 9.5, "utilization": 0.95, "p95_signal_delay_ms": 31.0,
              "rtt_p95_ms": 52.0, "loss_rate": 0.001, "power": 306.0, "jain_index": None}
    return {"benchmark": "transfer", "scenario": "s", "duration_s": 1.0, "runs": 1, "flows": 1,
            "compete": False, "arms": {"vivace": {"median": median, "runs": []}}}


def test_bench_transfer_json_is_json_only_and_the_default_is_a_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pccstream.bench import cli as bench_cli

    monkeypatch.setattr(bench_cli, "run_transfer_sync", _fake_transfer)
    argv = ["bench", "transfer", "--cc", "vivace", "--scenario", "s", "--duration", "1"]
    assert main([*argv, "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["arms"]["vivace"]["median"]["power"] == 306.0
    assert "run 1/1" in err  # progress goes to stderr
    assert main(argv) == 0
    out, _ = capsys.readouterr()
    assert "| vivace |" in out and "306.0" in out and "0.10" in out
    with pytest.raises(ValueError):
        json.loads(out)


def test_the_datagram_size_reaches_the_transfer_benchmark_or_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pccstream.bench import cli as bench_cli

    sizes: list[int] = []

    def fake(settings: Any, progress: Any) -> dict[str, Any]:
        sizes.append(settings.datagram_size)
        return _fake_transfer(settings, progress)

    monkeypatch.setattr(bench_cli, "run_transfer_sync", fake)
    argv = ["bench", "transfer", "--cc", "vivace", "--scenario", "s", "--duration", "1", "--json"]
    assert main([*argv, "--datagram-size", "1452"]) == 0
    assert main(argv) == 0
    assert sizes == [1452, 1200]
    capsys.readouterr()
    assert main([*argv, "--datagram-size", "1500"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--datagram-size 1500: expected 1200 to 1472" in err[0]
    ab = build_parser().parse_args(
        ["ab", "--cc", "c", "--scenario", "s", "--datagram-size", "1452"])
    assert ab.datagram_size == 1452


def test_max_load_reaches_the_transfer_benchmark_and_ab_or_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pccstream.bench import cli as bench_cli

    loads: list[tuple[float | None, float]] = []

    def fake(settings: Any, progress: Any) -> dict[str, Any]:
        loads.append((settings.max_load, settings.max_load_wait_s))
        return _fake_transfer(settings, progress)

    monkeypatch.setattr(bench_cli, "run_transfer_sync", fake)
    argv = ["bench", "transfer", "--cc", "vivace", "--scenario", "s", "--duration", "1", "--json"]
    assert main([*argv, "--max-load", "1.5", "--max-load-wait", "60"]) == 0
    assert main(argv) == 0
    assert loads == [(1.5, 60.0), (None, 600.0)]
    capsys.readouterr()
    for flag, value in (("--max-load", "0"), ("--max-load", "x"), ("--max-load-wait", "-1")):
        assert main([*argv, flag, value]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert f"{flag} '{value}': must be" in err[-1], err
    ab = build_parser().parse_args(["ab", "--cc", "c", "--scenario", "s", "--max-load", "1.5"])
    assert (ab.max_load, ab.max_load_wait) == (1.5, 600.0)


@pytest.mark.parametrize(
    "argv",
    [
        ["emulate", "scenarios", "--json"],
        ["emulate", "analyze", str(Path(__file__).parent / "emulator/data/mm-link-small.log"),
         "--json"],
    ],
)
def test_json_means_json_and_nothing_else(argv: list[str], capsys) -> None:
    assert main(argv) == 0
    json.loads(capsys.readouterr().out)


# -- ab export ------------------------------------------------------------------------------


class _SegmentsRunner(FakeRunner):
    async def run(self, design: Design, slot: Slot) -> dict[str, Any]:
        self.ran.append((slot.block, slot.arm))
        record = fake_record(design, slot)
        record["viewers"] = [
            {"bufferingRatio": 0.0, "error": None,
             "segments": [{"index": i, "bitrateKbps": 1200, "downloadMs": 100.0 + i}
                          for i in range(3)]}
        ]
        return record


def test_ab_export_carries_the_design_and_the_segments(tmp_path: Path, capsys) -> None:
    db = tmp_path / "r.sqlite"
    design = Design(arms=("vivace", "cubic"), scenario="live-6mbps-40ms-1bdp", runs=1,
                    duration_s=5.0, mode="live", bitrate_kbps=1200, ladder=(600, 1200),
                    buffer_s=4.0, target_latency_ms=800)
    with Store(db) as store:
        asyncio.run(run_experiment(store, design, _SegmentsRunner()))
        assert len(store.runs()) == len(schedule(design))
    out = tmp_path / "x.csv"
    assert main(["ab", "export", "--db", str(db), "--out", str(out)]) == 0
    assert "exported 2 runs" in capsys.readouterr().out
    runs = list(csv.DictReader(out.open()))
    assert len(runs) == 2
    row = runs[0]
    assert row["design_buffer_s"] == "4.0" and row["design_ladder"] == "[600, 1200]"
    assert row["design_target_latency_ms"] == "800" and row["design_mode"] == "live"
    assert row["design_arms"] == '["vivace", "cubic"]' and row["buffering_ratio"]
    segments = list(csv.DictReader((tmp_path / "x.segments.csv").open()))
    assert len(segments) == 6
    assert {s["arm"] for s in segments} == {"vivace", "cubic"}
    assert segments[0]["viewer"] == "0" and segments[0]["downloadMs"] == "100.0"
    # The old spelling still exports, with a warning.
    old = tmp_path / "old.csv"
    assert main(["ab", "--db", str(db), "--export", "csv", "--out", str(old)]) == 0
    assert "--export is deprecated" in capsys.readouterr().err
    assert old.read_text() == out.read_text()
    # --db before the subcommand counts too.
    before = tmp_path / "before.csv"
    assert main(["ab", "--db", str(db), "export", "--out", str(before)]) == 0
    assert before.read_text() == out.read_text()
    jsonl = tmp_path / "x.jsonl"
    assert main(["ab", "export", "--db", str(db), "--format", "jsonl", "--out", str(jsonl)]) == 0
    first = json.loads(jsonl.read_text().splitlines()[0])
    assert first["design_ladder"] == [600, 1200]


def test_bench_leaderboard_json_is_json_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pccstream.bench import cli as bench_cli

    async def fake(settings: Any, progress: Any) -> dict[str, Any]:
        progress("vivace: run 1/1")
        return {"rows": [{"rank": 1, "arm": "vivace", "throughput_mbps": 9.0, "power": 300.0}]}

    monkeypatch.setattr(bench_cli, "run_leaderboard", fake)
    assert main(["bench", "leaderboard", "--duration", "1", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["rows"][0]["arm"] == "vivace" and "run 1/1" in err
    assert main(["bench", "leaderboard", "--duration", "1"]) == 0
    assert "| 1 | vivace" in capsys.readouterr().out


def test_sigterm_interrupts_a_batch_command_like_ctrl_c_and_only_inside_the_block() -> None:
    import os
    import signal
    import time

    from pccstream.cli_conventions import sigterm_interrupts

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), sigterm_interrupts():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before the sleep ends
    assert signal.getsignal(signal.SIGTERM) == before

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pccstream.bench import sustain
from pccstream.bench.sustain import (
    SustainSettings,
    cpu_delta,
    parse_bitrates,
    summarize_rate,
    verdict,
)
from pccstream.cli import main
from pccstream.errors import UserError


def test_sustained_when_everything_holds() -> None:
    assert verdict(50_000, 49_000, 4, 450, {"server": 0.6, "emulator": 0.9}) == ("sustained", [])


@pytest.mark.parametrize(
    ("throughput", "dropped", "total", "cores", "reason"),
    [
        (47_000, 0, 450, {}, "throughput 47000 kbit/s < 0.95 x 50000 kbit/s"),
        (None, 0, 450, {}, "no throughput measured"),
        (50_000, 5, 450, {}, "dropped 5 of 450 frames (1.1 % >= 1 %)"),
        (50_000, 0, 0, {}, "no frames decoded"),
        (50_000, None, None, {}, "no frames decoded"),
        (50_000, 0, 450, {"server": 0.95}, "server used 95 % of a core"),
    ],
)
def test_each_failure_is_named(
    throughput: float | None, dropped: int | None, total: int | None,
    cores: dict[str, float], reason: str,
) -> None:
    assert verdict(50_000, throughput, dropped, total, cores) == ("not sustained", [reason])


def test_thresholds_are_inclusive_where_the_brief_says() -> None:
    # >= 0.95 x bitrate passes; exactly 1 % dropped and exactly 95 % of a core fail.
    assert verdict(100, 95, 0, 100, {"x": 0.9499})[0] == "sustained"
    assert verdict(100, 95, 1, 100, {})[0] == "not sustained"


def test_parse_bitrates() -> None:
    assert parse_bitrates("15000, 50000") == (15000, 50000)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "--bitrates '': expected kbit/s"),
        ("15000,15Q", "item 2 '15Q' is not a whole number of kbit/s"),
        ("15000,,3000", "item 2 '' is not a whole number"),
        ("50", "item 1 50 is outside 100..100000 kbit/s"),
        ("3000,3000", "item 2 3000 is listed twice"),
    ],
)
def test_bad_bitrates_name_the_item(text: str, message: str) -> None:
    with pytest.raises(UserError) as info:
        parse_bitrates(text)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bitrates", "15000,abc"], "--bitrates '15000,abc': item 2 'abc'"),
        (["--duration", "0"], "--duration 0: must be in (0, 3600] seconds"),
        # --json is taken (it is the only output anyway): the next flag's error shows.
        (["--json", "--duration", "0"], "--duration 0: must be in (0, 3600] seconds"),
        (["--headroom", "0.9"], "--headroom 0.9: must be within 1..10"),
        (["--rtt", "-1"], "--rtt -1: must be in (0, 2000] ms"),
        (["--queue-ms", "0"], "--queue-ms 0: must be in (0, 10000] ms"),
        (["--cc", "nosuch"], "unknown congestion controller 'nosuch'"),
        (["--cc", "vivace:t=abc"], "controller 'vivace': t='abc' is not a number"),
        (["--media", "/nonexistent"], "--media /nonexistent: no manifest.json"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "sustain", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_player_url_plays_the_fixed_rendition_through_the_given_port() -> None:
    settings = SustainSettings(cc="vivace", cc_params=(("t", "0.9"),))
    url = sustain.player_url("http://127.0.0.1:8080/?x=1", 5555, settings, 50_000)
    assert url == (
        "http://127.0.0.1:8080/?server=https%3A%2F%2F127.0.0.1%3A5555%2Fstream&cc=vivace"
        "&cc.t=0.9&mode=fixed&bitrate=50000&buffer=10&dashboard=0"
    )


def test_cpu_delta_counts_new_processes_from_zero() -> None:
    assert cpu_delta({1: 2.0, 2: 5.0}, {1: 3.5, 3: 0.25}) == {1: 1.5, 3: 0.25}


def test_queue_is_time_at_link_rate_with_a_floor() -> None:
    s = SustainSettings()
    assert s.queue_bytes(50_000) == round(55_000_000 / 8 * 0.1)
    assert s.queue_bytes(300) == sustain.MIN_QUEUE_BYTES


def test_summary_uses_the_wire_and_the_busiest_browser_process() -> None:
    metrics: dict[str, Any] = {"bufferingRatio": 0.0, "segments": [{"bytes": 1_000_000}] * 10}
    record = summarize_rate(
        SustainSettings(), 15_000, 10.0,
        cpu={10: 3.0, 20: 9.6, 30: 2.0, 31: 1.0},  # 10 server, 20 emulator, 30-31 browser
        pids={"server": 10, "emulator": 20},
        metrics=metrics, quality={"dropped": 0, "total": 300, "width": 1280, "height": 720},
        load=(1.0, 2.0, 3.0), link={"throughput_mbps": 16.0},
    )
    assert record["throughput_kbps"] == 16_000 and record["player_goodput_kbps"] == 8_000
    assert record["cpu_core_fraction"] == {
        "browser_tree": 0.3, "browser_max_process": 0.2, "browser_processes": 2,
        "server": 0.3, "emulator": 0.96,
    }
    assert record["link_kbps"] == 16_500 and record["video_size"] == "1280x720"
    assert record["verdict"] == "not sustained"
    assert record["reasons"] == ["emulator used 96 % of a core"]


def test_direct_mode_falls_back_to_player_goodput(tmp_path: Path) -> None:
    record = summarize_rate(
        SustainSettings(direct=True), 3000, 10.0, cpu={10: 1.0}, pids={"server": 10},
        metrics={"segments": [{"bytes": 400_000}] * 10}, quality={"dropped": 0, "total": 300,
                                                                 "width": 854, "height": 480},
        load=(0.5, 0.5, 0.5), link=None,
    )
    assert record["throughput_kbps"] == 3200 and record["wire_throughput_kbps"] is None
    assert record["link_kbps"] is None and record["verdict"] == "sustained"

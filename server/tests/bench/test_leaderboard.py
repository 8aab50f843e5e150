"""`bench leaderboard`: ranking, table, plot and CLI wiring (no network: the transfer is
stubbed with a canned result)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pccstream.bench import cli as bench_cli
from pccstream.bench import leaderboard
from pccstream.bench.leaderboard import LeaderboardSettings, default_arms, format_table, rank
from pccstream.cc.registry import list_controllers


def run_result(power: float | None, tput: float, delay: float) -> dict[str, Any]:
    return {"throughput_mbps": tput, "p95_signal_delay_ms": delay, "power": power,
            "loss_rate": 0.001, "utilization": 0.5, "p95_one_way_delay_ms": delay + 20,
            "errors": []}


def transfer_result(arms: dict[str, tuple[float | None, float, float]]) -> dict[str, Any]:
    return {
        "benchmark": "transfer",
        "arms": {
            label: {"median": run_result(*v), "runs": [run_result(*v), run_result(*v)]}
            for label, v in arms.items()
        },
    }


def test_default_arms_are_every_registered_controller() -> None:
    names = [a.cc for a in default_arms()]
    assert names == [info.name for info in list_controllers()]
    assert {"bbr", "cubic", "reno", "fixed", "aimd", "delay-threshold", "rocinante",
            "ewma-bdp", "vivace", "sprout", "sprout-ewma", "remy"} <= set(names)


def test_rank_sorts_by_power_with_missing_power_last() -> None:
    rows = rank(transfer_result({"a": (10.0, 1.0, 100.0), "b": (None, 0.0, 0.0),
                                 "c": (40.0, 4.0, 100.0)})["arms"])
    assert [r["arm"] for r in rows] == ["c", "a", "b"]
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert rows[0]["power_runs"] == [40.0, 40.0] and rows[0]["runs"] == 2


def test_format_table_is_markdown() -> None:
    rows = rank(transfer_result({"rocinante": (41.9, 3.31, 79.0),
                                 "aimd": (None, 0.0, 0.0)})["arms"])
    table = format_table(rows).splitlines()
    assert table[0].startswith("| # | controller")
    assert set(table[1]) <= {"|", "-"}
    assert "41.9" in table[2] and "3.31" in table[2] and "0.10 %" in table[2]
    assert "n/a" in table[3]


def test_cli_runs_the_leaderboard_and_plots(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[Any] = []

    async def fake_run_transfer(settings: Any, progress: Any) -> dict[str, Any]:
        seen.append(settings)
        return transfer_result({a.label: (20.0 + i, 2.0, 100.0)
                                for i, a in enumerate(settings.arms)})

    monkeypatch.setattr(leaderboard, "run_transfer", fake_run_transfer)
    import argparse

    parser = argparse.ArgumentParser()
    bench_cli.register(parser.add_subparsers())
    plot = tmp_path / "board.png"
    args = parser.parse_args(["bench", "leaderboard", "--cc", "bbr,fixed:window=20",
                              "--duration", "5", "--runs", "2", "--json", "--plot", str(plot)])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["benchmark"] == "leaderboard" and out["scenario"] == "verizon-lte-short"
    assert [r["arm"] for r in out["rows"]] == ["fixed:window=20", "bbr"]
    settings = seen[0]
    assert settings.duration_s == 5 and settings.runs == 2 and settings.compete is False
    assert plot.stat().st_size > 1000


def test_leaderboard_settings_default_to_the_contest_setup() -> None:
    s = LeaderboardSettings()
    assert s.scenario == "verizon-lte-short" and s.arms is None


def test_plot_rejects_other_formats(tmp_path: Path) -> None:
    from pccstream.errors import UserError

    with pytest.raises(UserError, match="png or .svg"):
        leaderboard.plot_leaderboard({"rows": []}, tmp_path / "x.jpg")

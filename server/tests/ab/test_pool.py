import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from pccstream.ab.design import Design
from pccstream.ab.pool import pool
from pccstream.cli import main
from pccstream.errors import UserError

from .fakes import FakeRunner, stored_experiment

DESIGN = Design(
    arms=("vivace", "cubic", "reno"),
    scenario="video-rttflap",
    runs=3,
    seed=5,
    duration_s=10.0,
    bitrate_kbps=3000,
)


def campaign(path: Path, design: Design) -> Path:
    return stored_experiment(path, design, FakeRunner())


def block_values(path: Path, arm: str) -> dict[int, float]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT block, buffering_ratio FROM runs WHERE arm = ?", (arm,))
        return dict(rows.fetchall())


def test_pools_the_blocks_of_two_campaigns_pair_by_pair(tmp_path: Path):
    a = campaign(tmp_path / "a.sqlite", DESIGN)
    b = campaign(tmp_path / "b.sqlite", replace(DESIGN, seed=6, runs=2))
    result = pool([a, b], "vivace", "cubic", resamples=500)

    assert [len(c.blocks) for c in result.campaigns] == [3, 2]
    expected = []
    for path in (a, b):
        mine, theirs = block_values(path, "vivace"), block_values(path, "cubic")
        expected += [mine[k] - theirs[k] for k in sorted(mine)]
    assert result.pairs == 5
    assert result.difference.value == pytest.approx(sum(expected) / 5)
    # The fake's means are 2 % against 20 %: every block lower, the CI well below zero.
    assert result.lower_in == 5
    assert result.difference.high is not None and result.difference.high < -0.15
    assert result.relative.value == pytest.approx(-0.9, abs=0.06)
    assert result.warnings == [] and result.skipped == []
    # The order of the files changes neither the campaigns' order nor the CI.
    swapped = pool([b, a], "vivace", "cubic", resamples=500)
    assert [c.seed for c in swapped.campaigns] == [5, 6]
    assert swapped.difference == result.difference


def test_an_arm_recorded_under_two_labels_is_pooled_with_alternatives(tmp_path: Path):
    a = campaign(tmp_path / "a.sqlite", DESIGN)
    renamed = replace(DESIGN, seed=6, arms=("vivace:theta0=0.45", "cubic"))
    b = campaign(tmp_path / "b.sqlite", renamed)

    only_one = pool([a, b], "vivace", "cubic", resamples=200)
    assert [c.source for c in only_one.campaigns] == [str(a)]
    assert only_one.skipped == [f"{b} ({renamed.experiment_id}): did not run vivace"]

    both = pool([a, b], "vivace|vivace:theta0=0.45", "cubic", resamples=200)
    assert [c.arm for c in both.campaigns] == ["vivace", "vivace:theta0=0.45"]
    assert both.pairs == 6


def test_campaigns_of_different_setups_are_refused_unless_mixed(tmp_path: Path):
    a = campaign(tmp_path / "a.sqlite", DESIGN)
    b = campaign(tmp_path / "b.sqlite", replace(DESIGN, seed=6, bitrate_kbps=6000))
    with pytest.raises(UserError, match=r"b\.sqlite .*bitrate_kbps is 6000, but .*3000"):
        pool([a, b], "vivace", "cubic", resamples=200)
    assert pool([a, b], "vivace", "cubic", mixed=True, resamples=200).pairs == 6


def test_campaigns_of_different_datagram_sizes_are_different_setups(tmp_path: Path):
    a = campaign(tmp_path / "a.sqlite", DESIGN)
    b = campaign(tmp_path / "b.sqlite", replace(DESIGN, seed=6, datagram_size=1452))
    with pytest.raises(UserError, match=r"datagram_size is 1452, but .* has None"):
        pool([a, b], "vivace", "cubic", resamples=200)


def test_campaigns_run_on_different_cpu_models_are_flagged(tmp_path: Path):
    a = campaign(tmp_path / "a.sqlite", DESIGN)
    b = campaign(tmp_path / "b.sqlite", replace(DESIGN, seed=6))
    with sqlite3.connect(a) as conn:
        conn.execute("UPDATE runs SET cpu_model = 'AMD EPYC'")
    with sqlite3.connect(b) as conn:
        conn.execute("UPDATE runs SET cpu_model = 'Intel Xeon'")
    result = pool([a, b], "vivace", "cubic", resamples=200)
    assert result.pairs == 6
    assert result.warnings == [
        f"the campaigns ran on 2 CPU models (AMD EPYC: {a}; Intel Xeon: {b}): the host is "
        "part of the instrument, so compare them before pooling"
    ]
    with sqlite3.connect(b) as conn:
        conn.execute("UPDATE runs SET cpu_model = 'AMD EPYC'")
    assert pool([a, b], "vivace", "cubic", resamples=200).warnings == []


def test_a_repeated_seed_is_flagged_as_the_same_networks(tmp_path: Path):
    a = campaign(tmp_path / "a.sqlite", DESIGN)
    b = campaign(tmp_path / "b.sqlite", replace(DESIGN, runs=2))  # same seed, other design id
    result = pool([a, b], "vivace", "cubic", resamples=200)
    assert len(result.warnings) == 1
    assert "has the seed of" in result.warnings[0] and "not independent" in result.warnings[0]


def test_starved_pairs_are_counted_and_dropped_on_request(tmp_path: Path):
    a = campaign(tmp_path / "a.sqlite", DESIGN)
    with sqlite3.connect(a) as conn:
        conn.execute("UPDATE runs SET cpu_starved = 1 WHERE arm = 'cubic' AND block = 1")
    kept = pool([a], "vivace", "cubic", resamples=200)
    assert kept.pairs == 3 and kept.campaigns[0].starved_blocks == [1]
    dropped = pool([a], "vivace", "cubic", drop_starved=True, resamples=200)
    assert dropped.pairs == 2 and dropped.dropped_starved == 1
    assert dropped.campaigns[0].blocks == [0, 2]
    # A starved run of an arm outside the comparison does not touch it.
    assert pool([a], "vivace", "reno", drop_starved=True, resamples=200).pairs == 3


def test_bad_input_names_what_and_where(tmp_path: Path):
    a = campaign(tmp_path / "a.sqlite", DESIGN)
    with pytest.raises(UserError, match="no campaign ran both vivace and bbr"):
        pool([a], "vivace", "bbr")
    with pytest.raises(UserError, match="--metric 'nosuch': not a run metric"):
        pool([a], "vivace", "cubic", metric="nosuch")
    with pytest.raises(UserError, match="no such results database"):
        pool([tmp_path / "missing.sqlite"], "vivace", "cubic")
    with pytest.raises(UserError, match="both name vivace"):
        pool([a], "vivace", "vivace|cubic")


def test_cli_prints_markdown_and_json(tmp_path: Path, capsys):
    a = campaign(tmp_path / "a.sqlite", DESIGN)
    b = campaign(tmp_path / "b.sqlite", replace(DESIGN, seed=6))
    argv = ["ab", "pool", str(a), str(b), "--arm", "vivace", "--against", "cubic",
            "--against", "reno", "--resamples", "200"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "vivace − cubic, buffering ratio (%), paired by block over 2 campaign(s)" in text
    assert "vivace − reno" in text and "| **pooled** | | | 6 |" in text
    assert "| **-18." in text  # a CI below zero is marked bold
    assert main(["ab", "pool", str(a), str(b), "--arm", "cubic", "--against", "vivace",
                 "--resamples", "200"]) == 0
    reverse = capsys.readouterr().out
    assert "| +18." in reverse and "**+18." not in reverse  # surely worse: not bold

    assert main([*argv, "--json", "--metric", "startup_delay_ms"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["against"] for d in data] == ["cubic", "reno"]
    assert data[0]["metric"] == "startup_delay_ms" and data[0]["pairs"] == 6
    assert [c["seed"] for c in data[0]["campaigns"]] == [5, 6]
    assert data[0]["campaigns"][0]["blocks"] == [1, 2, 3]

    assert main(["ab", "pool", str(a), "--arm", "vivace", "--against", "bbr"]) == 2
    assert "no campaign ran both vivace and bbr" in capsys.readouterr().err
    assert main([*argv[:8], "--resamples", "0"]) == 2
    assert "--resamples 0: expected at least 100" in capsys.readouterr().err
    assert main(["report", str(a), "--resamples", "5"]) == 2
    assert "--resamples 5: expected at least 100" in capsys.readouterr().err

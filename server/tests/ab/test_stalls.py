import json
from pathlib import Path
from typing import Any

import pytest

from pccstream.ab.design import Design, Slot
from pccstream.ab.stalls import markdown, parse_edges, summarize
from pccstream.cli import main
from pccstream.errors import UserError

from .fakes import FakeRunner, stored_experiment

DESIGN = Design(arms=("vivace", "cubic"), scenario="video-rttflap", runs=2, seed=3,
                duration_s=30.0, bitrate_kbps=3000)

# Cumulative (t_s, stall_seconds, stall_count) as the player samples them: cubic stalls once
# at the start; vivace twice after 5 s, one of them shorter than the sampling interval.
PLAYER = {
    "cubic": [(0.5, 0.0, 0), (1.0, 0.2, 1), (1.5, 0.2, 1), (6.0, 0.2, 1), (25.0, 0.2, 1)],
    "vivace": [(0.5, 0.0, 0), (1.0, 0.0, 0), (6.0, 0.05, 1), (6.5, 0.15, 2), (25.0, 0.15, 2)],
}


class StallRunner(FakeRunner):
    async def run(self, design: Design, slot: Slot) -> dict[str, Any]:
        record = await super().run(design, slot)
        record["series"]["player"] = [[
            {"t_s": t, "state": "playing", "stall_seconds": s, "stall_count": n}
            for t, s, n in PLAYER[slot.arm]]]
        return record


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return stored_experiment(tmp_path / "r.sqlite", DESIGN, StallRunner())


def test_stall_time_lands_in_the_phase_that_reported_it(db: Path) -> None:
    result = summarize([db])
    assert result.edges == [0.0, 5.0, 10.0, 20.0]
    by = {a.arm: a for a in result.arms}
    assert by["cubic"].sessions == 2 and by["vivace"].sessions == 2
    assert by["cubic"].stall_s == pytest.approx([0.2, 0.0, 0.0, 0.0])
    assert by["vivace"].stall_s == pytest.approx([0.0, 0.15, 0.0, 0.0])
    assert by["vivace"].stalls == pytest.approx([0.0, 2.0, 0.0, 0.0])
    assert by["vivace"].total_s == pytest.approx(0.15)
    text = markdown(result)
    assert "| 0–5 s | 5–10 s | 10–20 s | 20 s–end | total |" in text
    assert ("| vivace | 2 | 0.000 (0.0) | 0.150 (2.0) | 0.000 (0.0) | 0.000 (0.0) "
            "| 0.150 (2.0) |") in text


def test_edges_and_arms_choose_the_table(db: Path) -> None:
    result = summarize([db], edges=[0.0, 6.2], arms=["vivace"])
    assert [a.arm for a in result.arms] == ["vivace"]
    # The 6.0 s sample is in the first phase, the 6.5 s one in the second.
    assert result.arms[0].stall_s == pytest.approx([0.05, 0.10])


def test_bad_edges_and_unknown_arms_say_what_and_where(db: Path) -> None:
    for text in ("5,10", "0,10,5", "0,x", "0,inf"):
        with pytest.raises(UserError, match=f"--edges {text}: expected"):
            parse_edges(text)
    assert parse_edges("0,2.5,30") == [0.0, 2.5, 30.0]
    with pytest.raises(UserError, match=r"--arm bbr: no player series in .*r\.sqlite "
                                        r"\(arms: cubic, vivace\)"):
        summarize([db], arms=["bbr"])


def test_the_cli_prints_json(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ab", "stalls", str(db), "--arm", "cubic", "--edges", "0,2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["phases"] == ["0–2 s", "2 s–end"]
    assert out["arms"][0]["arm"] == "cubic" and out["arms"][0]["total_s"] == pytest.approx(0.2)

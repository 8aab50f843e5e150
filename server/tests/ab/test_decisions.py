import json
from pathlib import Path
from typing import Any

import pytest

from pccstream.ab.decisions import markdown, summarize
from pccstream.ab.design import Design, Slot
from pccstream.cli import main
from pccstream.errors import UserError

from .fakes import FakeRunner, stored_experiment

DESIGN = Design(arms=("vivace", "cubic"), scenario="video-rttflap", runs=2, seed=3,
                duration_s=10.0, bitrate_kbps=3000)
CAPACITY_MBPS = 10.0


def mi(t_s: float, decision: str, send_share: float, *, step_share: float = 0.0,
       gradient: float = 0.0) -> dict[str, Any]:
    rate = send_share * CAPACITY_MBPS * 1e6
    return {"type": "mi", "t_ms": t_s * 1000, "target_rate_bps": rate, "send_rate_bps": rate,
            "rtt_ms": 40.0, "rtt_gradient": gradient, "decision": decision,
            "step_bps": step_share * CAPACITY_MBPS * 1e6}


class MiRunner(FakeRunner):
    """Each run of `vivace` decides the same known MIs on a 10 Mbit/s link."""

    async def run(self, design: Design, slot: Slot) -> dict[str, Any]:
        record = await super().run(design, slot)
        record["link"] = {"down": {"capacity_mbps": CAPACITY_MBPS}}
        if slot.arm == "vivace":
            record["telemetry"] = [[
                {"type": "hello", "cc": "vivace"},
                mi(5.0, "increase", 0.50, step_share=0.5),  # before --skip-s: left out
                mi(10.0, "increase", 0.92, step_share=0.02),
                mi(11.0, "continue", 0.96, step_share=0.04),
                mi(12.0, "early-reverse", 1.07, step_share=-0.06, gradient=0.1),
                mi(13.0, "stale", 1.07, gradient=0.1),  # superseded: no band
                mi(14.0, "decrease", 0.93, step_share=-0.05, gradient=0.02),
            ]]
        return record


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return stored_experiment(tmp_path / "r.sqlite", DESIGN, MiRunner())


def test_verdicts_and_bands_are_shares_of_capacity(db: Path) -> None:
    d = summarize([db], "vivace")
    assert d.runs == 2 and d.seconds == pytest.approx(8.0)
    by = {r.verdict: r for r in d.verdicts}
    assert set(by) == {"increase", "continue", "early-reverse", "stale", "decrease"}
    assert by["increase"].mis == 2 and by["increase"].mean_step == pytest.approx(0.02)
    assert by["increase"].per_s == pytest.approx(2 / 8.0)
    assert by["decrease"].mean_target == pytest.approx(0.93)
    assert by["early-reverse"].counted_gradient == 1.0 and by["continue"].counted_gradient == 0
    bands = {(b.low, b.high): (b.mis, b.counted_gradient) for b in d.bands}
    assert bands == {(0.9, 0.95): (4, 0.5), (0.95, 1.0): (2, 0.0), (1.05, 1.1): (2, 1.0)}
    text = markdown(d)
    assert "| early-reverse | 2 |" in text and "| 0.90–0.95 | 4 | 50.0% |" in text


def test_an_arm_without_telemetry_is_named_with_the_arms_there(db: Path) -> None:
    with pytest.raises(UserError, match=r"--arm cubic: no run of it with MI telemetry.*"
                                        r"arms: cubic, vivace"):
        summarize([db], "cubic")
    with pytest.raises(UserError, match="--skip-s -1"):
        summarize([db], "vivace", skip_s=-1)


def test_the_cli_prints_json(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ab", "decisions", str(db), "--arm", "vivace", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["arm"] == "vivace" and out["runs"] == 2

"""The link-model video bench: the paired summary, the JSON it prints, bad arms."""

from __future__ import annotations

import json

import pytest

from pccstream.bench.video_model import SeedResult, main, summarize


def _result(pct: float) -> SeedResult:
    return SeedResult(buffering_pct=pct, worst_viewer_pct=2 * pct, utilization=0.9, startup_s=1.0,
                      loss_pct=0.5, p95_queue_ms=10.0)


def test_summary_pairs_each_arm_with_the_first_by_seed() -> None:
    results = {("a", 1): _result(4.0), ("a", 2): _result(6.0),
               ("b", 1): _result(3.0), ("b", 2): _result(4.0)}
    rows = summarize(["a", "b"], [1, 2], results)
    assert [r["arm"] for r in rows] == ["a", "b"]
    assert rows[0]["minus_a_pct"]["mean"] == 0.0
    assert rows[1]["minus_a_pct"]["mean"] == pytest.approx(-1.5)
    assert rows[1]["buffering_pct"]["mean"] == pytest.approx(3.5)
    assert rows[1]["worst_viewer_pct"] == pytest.approx(7.0)
    assert rows[1]["per_seed_pct"] == [3.0, 4.0]
    assert rows[1]["loss_pct"] == 0.5 and rows[1]["p95_queue_ms"] == 10.0


def test_prints_one_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    main(["fig51", "--arms", "cubic", "--seeds", "1", "--duration", "4", "--jobs", "1",
          "--bitrate", "3"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["setup"]["figure"] == "fig51" and doc["setup"]["prefetch"] is True
    assert doc["setup"]["stagger_s"] is None  # one viewer: nothing to stagger
    assert doc["arms"][0]["arm"] == "cubic" and len(doc["arms"][0]["per_seed_pct"]) == 1


@pytest.mark.parametrize("argv, message", [
    (["fig52", "--arms", "vivace:nope=1"], "--arms: controller 'vivace' has no parameter 'nope'"),
    (["fig52", "--seeds", "0"], "--seeds and --jobs must be at least 1"),
    (["fig51", "--stagger", "0.5"], "--stagger applies to fig52 only"),
    (["fig52", "--stagger", "-1"], "--stagger must not be negative, got -1.0"),
    (["fig51", "--start-jitter", "0.02"], "--start-jitter applies to fig52 only"),
    (["fig52", "--start-jitter", "-1"], "--start-jitter must not be negative, got -1.0"),
])
def test_bad_arguments_are_one_line(argv: list[str], message: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err

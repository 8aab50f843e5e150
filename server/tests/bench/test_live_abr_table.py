"""The issue-16 per-block table: each live arm against the WebRTC arm, block by block."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

from pccstream.ab.design import Design, Slot, schedule
from pccstream.ab.experiment import run_experiment
from pccstream.ab.progress import Progress
from pccstream.ab.store import Store
from pccstream.bench import live_abr

from ..ab.fakes import fake_record

DESIGN = Design(arms=("vivace", "webrtc"), scenario="video-rttflap", runs=2, seed=4,
                duration_s=10.0, mode="live", bitrate_kbps=2500, target_latency_ms=300,
                live_abr=True)


class Runner:
    """vivace: p95 200 ms, 1 stall but no freeze by WebRTC's rule, 720p; webrtc: p95 180 / 220
    ms by block, 2 freezes, 540p."""

    async def run(self, design: Design, slot: Slot) -> dict[str, Any]:
        record = fake_record(design, slot)
        live = slot.arm == "vivace"
        record.update(latency_p95_ms=200.0 if live else (180.0 if slot.block == 0 else 220.0),
                      stall_count=1.0 if live else 2.0, frame_height=720.0 if live else 540.0,
                      freeze_count=0.0 if live else 2.0)
        return record


def test_the_table_pairs_vivace_and_webrtc_by_block(tmp_path: Path) -> None:
    db = tmp_path / "live.sqlite"
    with Store(db) as store:
        progress = Progress(len(schedule(DESIGN)), 0, 1.0, stream=io.StringIO())
        asyncio.run(run_experiment(store, DESIGN, Runner(), progress=progress))
    rows = live_abr.blocks(db)
    assert [(r["block"], r["latency_ok"], r["stalls_ok"]) for r in rows] == [
        (0, False, True), (1, True, True)]
    assert rows[0]["arm"] == "vivace"
    assert rows[0]["live"]["frame_height"] == 720.0 and rows[0]["webrtc"]["frame_height"] == 540.0
    text = live_abr.markdown(rows)
    assert "| vivace | 200.0 / 180.0 | **no** | 1 / 2 | yes | 0 / 2 | yes | 720 / 540 |" in text
    assert rows[0]["freezes_ok"] is True
    assert "live ABR up to 2500 kbit/s, target 300 ms" in text


def test_the_summary_pools_blocks_with_a_paired_ci(tmp_path: Path, capsys) -> None:
    db = tmp_path / "live.sqlite"
    with Store(db) as store:
        progress = Progress(len(schedule(DESIGN)), 0, 1.0, stream=io.StringIO())
        asyncio.run(run_experiment(store, DESIGN, Runner(), progress=progress))
    [row] = live_abr.summary(live_abr.blocks(db))
    # p95 200 against 180 and 220: +20 and −20 ms.
    assert (row["arm"], row["blocks"], row["latency_ok"], row["stalls_ok"], row["both_ok"]) == (
        "vivace", 2, 1, 2, 1)
    assert row["p95_difference_ms"] == 0.0
    assert row["p95_difference_low_ms"] == -20.0 and row["p95_difference_high_ms"] == 20.0
    assert row["cpu_starved_blocks"] == 0
    assert live_abr.main([str(db), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["summary"] == [row] and len(printed["blocks"]) == 2
    assert live_abr.main([str(db)]) == 0
    assert "| vivace | 2 | 1 | 2 | 1 | +0.0 (-20.0 … +20.0) | 0 |" in capsys.readouterr().out


def test_no_live_experiment_is_one_clear_line(tmp_path: Path, capsys) -> None:
    assert live_abr.main([str(tmp_path / "missing.sqlite")]) == 2
    assert "no such results database" in capsys.readouterr().err

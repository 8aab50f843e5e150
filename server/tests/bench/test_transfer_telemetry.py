"""`bench transfer --log-dir` keeps each flow's controller telemetry beside the emulator log."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pccstream.bench.transfer import Arm, TransferSettings, run_transfer


def test_log_dir_keeps_each_flows_mi_telemetry(tmp_path: Path) -> None:
    settings = TransferSettings(arms=[Arm.parse("vivace")], scenario="const-12mbps-30ms-1bdp",
                                duration_s=2.0, log_dir=tmp_path, realtime_endpoints=False)
    result = asyncio.run(run_transfer(settings))
    [run] = result["arms"]["vivace"]["runs"]
    assert run["errors"] == []
    # The host's health beside the link's figures: the inputs of ab's starvation rule.
    assert run["load_wait_s"] == 0.0 and run["loadavg_start"] >= 0 and run["cpu_window_s"] > 0
    assert run["cpu_starved"] in (0, 1) and result["arms"]["vivace"]["median_runs"] == 1
    [telemetry] = tmp_path.glob("run0-vivace-flow0.telemetry.jsonl")
    records = [json.loads(line) for line in telemetry.read_text().splitlines()]
    assert any(r.get("type") == "mi" and "target_rate_bps" in r for r in records)
    assert (tmp_path / "run0-vivace.log").is_file()

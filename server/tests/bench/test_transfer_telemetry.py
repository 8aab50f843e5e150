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
    assert result["arms"]["vivace"]["runs"][0]["errors"] == []
    [telemetry] = tmp_path.glob("run0-vivace-flow0.telemetry.jsonl")
    records = [json.loads(line) for line in telemetry.read_text().splitlines()]
    assert any(r.get("type") == "mi" and "target_rate_bps" in r for r in records)
    assert (tmp_path / "run0-vivace.log").is_file()

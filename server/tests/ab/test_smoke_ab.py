"""The CI smoke A/B: 2 arms x 1 run x 15 s with real Chromium, server and emulator, then the
report. Never skipped: without Chromium, the web build or the default media it fails, naming
what to install; ~45 s on a loaded 2-core machine."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pccstream.errors import ToolMissingError
from pccstream.harness.browser import chromium_path
from tests.checkout import REPO_ROOT

MEDIA = REPO_ROOT / "media" / "default"


def _chromium() -> str | None:
    try:
        return chromium_path()
    except ToolMissingError:
        return None


def test_smoke_ab_stores_runs_and_reports(tmp_path: Path):
    # The bootstrap installs Chromium; CI must run this test, never skip it.
    assert _chromium() is not None, "Chromium is not installed (run infra/bootstrap.sh)"
    web_app = REPO_ROOT / "web" / "dist" / "index.html"
    assert web_app.is_file(), "build the web app first (web/dist)"
    assert (MEDIA / "manifest.json").is_file(), "media/default is missing (infra/bootstrap.sh)"
    db = tmp_path / "smoke.sqlite"
    started = time.monotonic()
    ab = subprocess.run(
        [
            sys.executable,
            "-m",
            "pccstream.cli",
            "ab",
            "--arms",
            "vivace,cubic",
            "--scenario",
            "const-12mbps-30ms-1bdp",
            "--mode",
            "fixed",
            "--bitrate",
            "750",
            "--runs",
            "1",
            "--duration",
            "15",
            "--media",
            str(MEDIA),
            # media/default has four rungs: keep the fixed one from the first segment, so the
            # mean bitrate is exactly it.
            "--player",
            "startRendition=abr",
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    elapsed = time.monotonic() - started
    assert ab.returncode == 0, ab.stderr
    assert "2 runs" in ab.stdout, ab.stdout

    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    runs = conn.execute("SELECT * FROM runs ORDER BY slot").fetchall()
    assert sorted(r["arm"] for r in runs) == ["cubic", "vivace"]
    for run in runs:
        viewers = json.loads(run["viewers_json"])
        assert len(viewers) == 1 and viewers[0]["error"] is None, viewers[0].get("error")
        assert run["player_errors"] == 0
        assert viewers[0]["segments"], "no segment downloaded"
        assert run["play_seconds"] > 3
        assert run["startup_delay_ms"] is not None and run["startup_delay_ms"] > 0
        assert run["mean_bitrate_kbps"] == pytest.approx(750, rel=0.01)
        assert run["throughput_mbps"] > 0.2
        assert run["p95_queue_delay_ms"] is not None
        assert run["overhead_s"] < 15, "per-run overhead"
        # CPU health: measured for every run, and the flag decided (0 or 1, not unknown).
        assert run["decoded_frames"] > 0 and run["dropped_frames"] is not None
        assert run["event_loop_lag_p95_ms"] is not None
        assert run["buffering_ratio_with_startup"] > run["buffering_ratio"]
        assert run["browser_cpu_s"] > 0 and run["emulator_cpu_s"] > 0 and run["server_cpu_s"] > 0
        assert run["cpu_window_s"] > 15 and run["host_cpus"] >= 1
        assert run["loadavg_start"] is not None and run["cpu_starved"] in (0, 1)
        config = json.loads(run["config_json"])
        assert config["arm"]["cc"] == run["arm"]
        assert config["network_seed"] == runs[0]["network_seed"]  # one block, one network
        versions = json.loads(run["versions_json"])
        assert versions["chromium"] and versions["pccstream"]
        series = json.loads(run["series_json"])
        assert len(series["player"][0]) >= 10 and series["link"]["t_s"]
    import zlib

    records = json.loads(zlib.decompress(runs[0]["telemetry_z"]))[0]
    assert records[0]["type"] == "hello" and records[0]["cc"] == runs[0]["arm"]
    assert any(r["type"] == "sample" for r in records)

    out = tmp_path / "report.html"
    report = subprocess.run(
        [sys.executable, "-m", "pccstream.cli", "report", str(db), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 0, report.stderr
    page = out.read_text()
    assert "const-12mbps-30ms-1bdp" in page and "vivace" in page and "cubic" in page
    assert page.count("<svg") == 4 and "<script" not in page
    print(f"smoke A/B: {elapsed:.1f} s for 2 runs x 15 s")

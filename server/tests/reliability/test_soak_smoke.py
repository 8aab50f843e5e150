"""`bench soak`'s churn and viewer parts in miniature, against the real server process."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pccstream.bench.soak import KILLED_PER_BATCH, SoakSettings, run_churn, run_viewers
from pccstream.media.manifest import load_manifest

from ..server.conftest import make_fake_media


def test_churn_of_every_kind_gets_correct_bytes(tmp_path: Path) -> None:
    media = make_fake_media(tmp_path / "media")
    settings = SoakSettings(media, churn_sessions=12, churn_baseline_session=0,
                            churn_killed_every=10, churn_settle_s=0.0, churn_settled_every=5)
    result = asyncio.run(run_churn(settings, load_manifest(media), lambda line: None))
    assert result["wrong_answers"] == 0
    assert result["kinds"]["killed"] == KILLED_PER_BATCH
    assert result["kinds"]["cancelled"] >= 1 and result["kinds"]["normal"] >= 1
    assert result["ok"]  # growth is not judged below 500 sessions
    assert len(result["rss_mib_curve"]) >= 2
    # The same settled sample at the baseline, at each checkpoint after it, and at the end.
    checkpoints = [session for session, _ in result["rss_mib_settled"]]
    assert len(checkpoints) == 3 and checkpoints == sorted(set(checkpoints))
    assert result["rss_mib_settled_baseline"] == result["rss_mib_settled"][0]
    assert result["rss_mib_settled_end"] == result["rss_mib_settled"][-1]
    assert result["rss_settled_spread_mib"] >= 0


def test_concurrent_viewers_through_the_emulator_get_every_byte(tmp_path: Path) -> None:
    media = make_fake_media(tmp_path / "media")
    settings = SoakSettings(media, viewers=5, viewer_seconds=1.5)
    result = asyncio.run(run_viewers(settings, load_manifest(media), lambda line: None))
    assert result["errors"] == 0 and result["wrong"] == 0
    assert result["segments"] >= 5
    assert result["server_cpu_cores"] >= 0 and result["server_rss_mib_after"] > 0
    assert set(result["udp_rcvbuf_drops"]) == {"server", "emulator", "namespace"}
    assert result["udp_rcvbuf_drops"]["server"] >= 0


def test_ab_kill_runs_a_real_experiment_and_resumes_it(tmp_path: Path) -> None:
    from pccstream.bench.soak import AB_KILL_ARMS, ab_kill_command

    command = ab_kill_command(tmp_path / "media", tmp_path / "ab.sqlite")
    assert "--resume" not in command and "--cc" in command
    assert command[command.index("--cc") + 1] == ",".join(AB_KILL_ARMS)
    resumed = ab_kill_command(tmp_path / "media", tmp_path / "ab.sqlite", resume=True)
    assert resumed[-1] == "--resume"

from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from pccstream.ab.design import Arm, Design
from pccstream.ab.runner import link_series, player_query, summarize_viewers
from pccstream.emulator.analyze import DirectionLog


def test_player_query_dials_the_emulator_with_the_arm():
    design = Design(arms=("vivace:t=0.9",), scenario="x", bitrate_kbps=3000, buffer_s=8)
    query = dict(parse_qsl(player_query(design, Arm("vivace", (("t", "0.9"),)), 4433)))
    assert query == {
        "server": "https://127.0.0.1:4433/stream",
        "cc": "vivace",
        "cc.t": "0.9",
        "mode": "fixed",
        "buffer": "8",
        "dashboard": "0",
        "bitrate": "3000",
    }
    abr = Design(arms=("cubic",), scenario="x", mode="abr", bitrate_kbps=None)
    assert "bitrate" not in dict(parse_qsl(player_query(abr, Arm("cubic"), 1)))


def test_player_query_carries_a_remy_table():
    design = Design(arms=("remy:table=2014-100x", "sprout"), scenario="x")
    query = dict(parse_qsl(player_query(design, Arm.parse("remy:table=2014-100x"), 1)))
    assert (query["cc"], query["cc.table"]) == ("remy", "2014-100x")
    assert dict(parse_qsl(player_query(design, Arm.parse("sprout"), 1)))["cc"] == "sprout"


def test_viewer_summary_is_the_mean_over_viewers():
    viewers = [
        {"bufferingRatio": 0.1, "startupDelayMs": 1000, "stallCount": 2, "ended": False,
         "error": None, "meanBitrateKbps": 3000},
        {"bufferingRatio": 0.3, "startupDelayMs": None, "stallCount": 4, "ended": False,
         "error": "boom", "meanBitrateKbps": 1500},
        None,
    ]  # fmt: skip
    summary = summarize_viewers(viewers)
    assert summary["buffering_ratio"] == pytest.approx(0.2)
    assert summary["startup_delay_ms"] == 1000  # viewers that started
    assert summary["stall_count"] == 3
    assert summary["mean_bitrate_kbps"] == 2250
    assert summary["player_errors"] == 2 and summary["ended"] == 0
    assert summarize_viewers([{"ended": True, "error": None}])["ended"] == 1


def test_viewer_summary_carries_the_cpu_health_fields():
    viewers = [
        {"droppedFrames": 2, "decodedFrames": 300, "eventLoopLagP95Ms": 10.0,
         "eventLoopLagMaxMs": 40.0, "bufferingRatioWithStartup": 0.1, "error": None},
        {"droppedFrames": 4, "decodedFrames": 100, "eventLoopLagP95Ms": 30.0,
         "eventLoopLagMaxMs": 250.0, "bufferingRatioWithStartup": 0.3, "error": None},
    ]  # fmt: skip
    summary = summarize_viewers(viewers)
    assert summary["dropped_frames"] == 3 and summary["decoded_frames"] == 200
    assert summary["event_loop_lag_p95_ms"] == 20.0
    assert summary["event_loop_lag_max_ms"] == 250.0  # the worst viewer
    assert summary["buffering_ratio_with_startup"] == pytest.approx(0.2)
    assert summarize_viewers([{"droppedFrames": None}])["dropped_frames"] is None


def test_viewer_summary_counts_freezes_by_webrtcs_rule_beside_stalls():
    live = {"stallCount": 2, "freezeCount": 0, "error": None}  # stricter stalls, no freeze
    webrtc = {"stallCount": 1, "freezeCount": 1, "error": None}  # WebRTC: freezes are stalls
    assert summarize_viewers([live])["freeze_count"] == 0
    assert summarize_viewers([live])["stall_count"] == 2
    assert summarize_viewers([webrtc])["freeze_count"] == 1
    assert summarize_viewers([{"error": None}])["freeze_count"] is None


def test_link_series_bins_the_log():
    dl = DirectionLog()
    dl.cap_t, dl.cap_b = [0.0, 250.0, 600.0], [1500, 1500, 1500]
    dl.dep_t, dl.dep_b, dl.dep_q = [100.0, 700.0, 800.0], [1000, 1000, 1000], [10.0, 20.0, 40.0]
    dl.first, dl.last = 0.0, 800.0
    series = link_series(dl, bin_ms=500)
    assert series["t_s"] == [0.25, 0.75]
    assert series["capacity_mbps"] == [pytest.approx(0.048), pytest.approx(0.024)]
    assert series["throughput_mbps"] == [pytest.approx(0.016), pytest.approx(0.032)]
    assert series["queue_delay_ms"] == [10.0, 30.0]
    assert link_series(DirectionLog())["t_s"] == []


def test_webrtc_receiver_metrics_read_as_a_viewer():
    from pccstream.ab.runner import webrtc_series, webrtc_viewer

    viewer = webrtc_viewer({"bufferingRatio": 0.02, "playSeconds": 10.0, "bytesReceived": 3_125_000,
                            "latencyP95Ms": 90.0, "framesSkipped": 4, "error": None})
    assert viewer["meanBitrateKbps"] == pytest.approx(2500.0)
    summary = summarize_viewers([viewer])
    assert summary["latency_p95_ms"] == 90.0 and summary["frames_skipped"] == 4
    assert summary["buffering_ratio"] == 0.02 and summary["ended"] == 0
    call = {"playing_at_s": 1000.0, "samples": [
        {"t_ms": 1_001_000, "freeze_s": 0, "jitter_buffer_ms": 20, "sender": {"target_bps": 1}},
        {"t_ms": 1_002_000, "freeze_s": 0.4, "jitter_buffer_ms": 30, "sender": {}},
        {"t_ms": 1_003_000, "freeze_s": 0.4, "jitter_buffer_ms": 25},
    ]}
    points = webrtc_series(call)
    assert [p["t_s"] for p in points] == [1.0, 2.0, 3.0]
    assert [p["state"] for p in points] == ["playing", "stalled", "playing"]
    assert points[0]["buffer_s"] == 0.02 and points[0]["target_bps"] == 1


def test_live_player_query_asks_for_the_target_latency():
    design = Design(arms=("vivace", "webrtc"), scenario="x", mode="live", bitrate_kbps=2500,
                    target_latency_ms=100)
    query = dict(parse_qsl(player_query(design, Arm("vivace"), 4433)))
    assert query["mode"] == "live" and query["latency"] == "100" and query["bitrate"] == "2500"
    assert "buffer" not in query


def test_an_arms_player_parameters_override_the_designs():
    design = Design(arms=("vivace", "vivace:player.fec=8"), scenario="x", mode="live",
                    bitrate_kbps=2500, target_latency_ms=300,
                    player_params=(("fec", "4"), ("keep", "500")))
    query = parse_qsl(player_query(design, Arm.parse("vivace:player.fec=8"), 4433))
    assert [v for k, v in query if k == "fec"] == ["8"]
    assert dict(query)["keep"] == "500"


def test_live_abr_player_query_turns_live_abr_on():
    design = Design(arms=("vivace", "webrtc"), scenario="x", mode="live", bitrate_kbps=2500,
                    target_latency_ms=300, live_abr=True)
    query = dict(parse_qsl(player_query(design, Arm("vivace"), 4433)))
    assert query["abr"] == "1" and query["bitrate"] == "2500" and query["latency"] == "300"


def test_mean_frame_height_averages_the_samples_with_a_picture():
    from pccstream.ab.runner import mean_frame_height

    series = [[{"frame_height": 720}, {"frame_height": None}, {"frame_height": 360}],
              [{"frame_height": 0}]]
    assert mean_frame_height(series) == 540.0
    assert mean_frame_height([[{"t_s": 1.0}]]) is None


def test_player_params_follow_the_harness_parameters():
    design = Design(arms=("cubic",), scenario="none", bitrate_kbps=3000,
                    player_params=(("startRendition", "lowest"),))
    pairs = parse_qsl(player_query(design, Arm("cubic"), 4433))
    assert pairs[-1] == ("startRendition", "lowest")


def test_the_server_gets_the_designs_datagram_size():
    from pccstream.ab.runner import server_args

    plain = Design(arms=("cubic",), scenario="none", bitrate_kbps=3000)
    assert server_args(plain, None) == []
    ethernet = Design(arms=("cubic",), scenario="none", bitrate_kbps=3000, datagram_size=1452)
    assert server_args(ethernet, Path("live")) == [
        "--live-media", "live", "--max-datagram-size", "1452"]

"""The link model's host effects (ACK batching, host stalls, RTT steps, a video viewer) and
the PCC changes they motivate: per-ACK RTT samples, the spurious-timeout undo."""

from __future__ import annotations

from typing import Any

import pytest

from pccstream.cc.registry import create_controller
from pccstream.cc.sim import (
    BROWSER_HOST,
    WIRE_PAYLOAD_SHARE,
    Link,
    Receiver,
    Simulator,
    VideoPlayer,
    jain_index,
    report,
    scenario_outage,
    scenario_video,
    scenario_viewers,
)

from .cc_driver import BEFORE_SESSION_56, BEFORE_SESSION_62, PROPORTIONAL_STEPS

OUTAGE_BOUND_S = 1.0


def _run(name: str, link: Link, *, until: float, receiver: Receiver | None = None,
         params: dict[str, str] | None = None, seed: int = 1
         ) -> tuple[Simulator, Any, list[dict[str, Any]]]:
    sim = Simulator(link, seed=seed, receiver=receiver)
    ctrl = create_controller(name, params or {}, seed=seed)
    events: list[dict[str, Any]] = []
    sim.add_flow(ctrl)
    ctrl.event_sink = events.append
    sim.run(until)
    return sim, ctrl, events


def test_receiver_batches_acks_and_reports_their_delay() -> None:
    sim, ctrl, _ = _run("cubic", Link(12.0, 0.03, 100_000), until=2.0,
                        receiver=Receiver(ack_every=10, max_ack_delay=0.025))
    # One RTT sample per frame: the estimator removed the ACK delay, so the smoothed RTT stays
    # near the path's 30 ms (plus queueing) although most packets waited for a batch.
    assert 0.029 < ctrl.rtt_stats.min_rtt < 0.031
    assert sim.flows[0].stats.delivered_total > 1_000_000


def test_rtt_steps_never_reorder_packets() -> None:
    link = Link(12.0, 0.1, 100_000, rtt_schedule=[(1.0, 0.01)])
    sim, _, _ = _run("vivace", link, until=3.0)
    acks = [t for t, _ in sim.flows[0].stats.delivered]
    assert acks == sorted(acks)
    # After the step the path is 10 ms long (plus what the controller queues).
    late = sim.flows[0].stats.rtt_samples(2.5, 3.0)
    assert 0.01 <= min(late) < 0.03


def test_host_stalls_are_seeded_and_delay_packets() -> None:
    rx = Receiver(stall_rate=20.0, stall_s=0.004)
    a, _, _ = _run("cubic", Link(12.0, 0.03, 100_000), until=3.0, receiver=rx)
    b, _, _ = _run("cubic", Link(12.0, 0.03, 100_000), until=3.0, receiver=rx)
    assert a.flows[0].stats.rtts == b.flows[0].stats.rtts
    clean, _, _ = _run("cubic", Link(12.0, 0.03, 100_000), until=3.0)
    assert max(r for _, r in a.flows[0].stats.rtts) > max(r for _, r in clean.flows[0].stats.rtts)


def test_video_player_counts_startup_and_stalls() -> None:
    # 5 Mbit/s video on a 4 Mbit/s link: playback starts after the first 2 s segment and
    # then has to stall for about a fifth of the time.
    sim = Simulator(Link(4.0, 0.03, 100_000), seed=1)
    player = VideoPlayer(5.0, request_rtt=0.03)
    player.flow = sim.add_flow(create_controller("cubic", seed=1), app=player)
    sim.run(30.0)
    player(30.0)
    assert player.startup_at is not None and 2.0 < player.startup_at < 4.0
    assert 0.1 < player.buffering_ratio < 0.3


def _cubic_viewer(**player: Any) -> VideoPlayer:
    """30 s of an 8 Mbit/s viewer on 8.8 Mbit/s, 100 ms RTT, 300 kB queue, over Cubic."""
    sim = Simulator(Link(8.8, 0.1, 300_000), seed=1)
    viewer = VideoPlayer(8.0, request_rtt=0.1, **player)
    viewer.flow = sim.add_flow(create_controller("cubic", seed=1), app=viewer)
    sim.run(30.0)
    viewer(30.0)
    return viewer


def test_prefetch_keeps_the_link_busy_between_segments() -> None:
    # One request per segment idles the link a round trip in every 2 s segment, half the
    # 10 % headroom. The browser player requests the next segment with the current one
    # (prefetch=1), and so does the model's viewer by default.
    on, off = _cubic_viewer(prefetch=True), _cubic_viewer(prefetch=False)
    assert VideoPlayer(8.0).prefetch
    assert on.downloaded_s > off.downloaded_s
    assert on.buffering_ratio < off.buffering_ratio


def test_headers_leave_the_video_less_headroom() -> None:
    # With every packet byte media the video has 10 % headroom; the real stack's 1200-byte
    # datagrams carry 1165 bytes of it in 1228 on the wire, 4 %.
    assert pytest.approx(0.949, abs=0.001) == WIRE_PAYLOAD_SHARE
    bare = _cubic_viewer(payload_share=1.0)
    wired = _cubic_viewer(payload_share=WIRE_PAYLOAD_SHARE)
    assert wired.segment_bytes == pytest.approx(bare.segment_bytes / WIRE_PAYLOAD_SHARE)
    assert wired.downloaded_s < bare.downloaded_s


def test_per_ack_rtt_samples_see_less_host_noise() -> None:
    # An uncongested 200 Mbit/s path, Vivace capped at 20 Mbit/s: every significant RTT
    # gradient is noise from ACK batching and host stalls.
    def false_gradients(per_ack: str) -> int:
        rx = Receiver(ack_every=10, max_ack_delay=0.025, stall_rate=20.0, stall_s=0.004)
        _, _, events = _run("vivace", Link(200.0, 0.03, 10_000_000), until=10.0, receiver=rx,
                            params={"rtt_per_ack": per_ack, "max_rate_mbps": "20"})
        return sum(1 for e in events if e["type"] == "mi" and e["utility"] is not None
                   and e["decision"] != "stale" and e["rtt_gradient"] > 0)
    per_packet, per_ack = false_gradients("0"), false_gradients("1")
    assert per_ack * 2 <= per_packet


def _timeout_events(params: dict[str, str], link: Link, until: float
                    ) -> tuple[Any, list[dict[str, Any]]]:
    _, ctrl, events = _run("vivace", link, until=until, params=params, seed=2)
    return ctrl, events


def test_timeout_after_a_longer_path_is_undone() -> None:
    # The RTT steps from 10 to 100 ms at 4 s (the thesis's redrawn RTT): no feedback for ten
    # old RTTs times the MI out, but the late packets all arrive at the old rate.
    # Without the timeout's floor (mi_timeout_min_ms), five 10 ms RTTs expire first.
    link = Link(20.0, 0.01, 300_000, rtt_schedule=[(4.0, 0.1)])
    no_floor = {"mi_timeout_min_ms": "0"}
    ctrl, events = _timeout_events(no_floor, link, 5.0)
    decisions = [e["decision"] for e in events]
    assert "timeout" in decisions and "timeout-undone" in decisions
    assert ctrl.timeouts_undone >= 1
    undone = next(e for e in events if e["decision"] == "timeout-undone")
    assert undone["step_bps"] > 0
    off, off_events = _timeout_events({**no_floor, "timeout_undo": "0"}, link, 5.0)
    assert off.timeouts >= 1 and off.timeouts_undone == 0
    assert "timeout-undone" not in [e["decision"] for e in off_events]


def test_the_timeout_floor_outlasts_a_longer_path() -> None:
    # The same 90 ms step: the default floor (150 ms) waits it out, so no MI times out.
    link = Link(20.0, 0.01, 300_000, rtt_schedule=[(4.0, 0.1)])
    ctrl, events = _timeout_events({}, link, 5.0)
    assert ctrl.timeouts == 0
    assert "timeout" not in [e["decision"] for e in events]


def test_timeout_after_a_capacity_drop_stands() -> None:
    # 20 -> 2 Mbit/s into a deep buffer: the late packets arrive ten times slower than sent.
    link = Link(20.0, 0.03, 2_000_000, schedule=[(4.0, 2.0)])
    ctrl, events = _timeout_events({}, link, 8.0)
    assert ctrl.timeouts >= 1 and ctrl.timeouts_undone == 0
    # ACKs kept coming, only slower: not an outage, no restart.
    assert ctrl.outages == 0


def test_video_scenario_is_deterministic_and_plays() -> None:
    a = scenario_video("vivace", bitrate_mbps=15.0, seed=3, duration=12.0)
    b = scenario_video("vivace", bitrate_mbps=15.0, seed=3, duration=12.0)
    assert a == b
    assert a.startup_s < 5.0 and a.throughput_mbps > 10.0
    assert BROWSER_HOST.ack_every == 10


def test_viewers_scenario_is_deterministic_and_starts_each_viewer_in_turn() -> None:
    a = scenario_viewers("cubic", viewers=2, bitrate_mbps=2.0, seed=2, duration=12.0,
                         stagger_s=1.0)
    b = scenario_viewers("cubic", viewers=2, bitrate_mbps=2.0, seed=2, duration=12.0,
                         stagger_s=1.0)
    assert a == b
    assert len(a.throughputs_mbps) == len(a.buffering_ratios) == 2
    assert a.startups_s[1] > 1.0 + 0.1  # the second viewer opens 1 s later, 100 ms RTT
    assert a.utilization > 0.8 and all(t > 0 for t in a.throughputs_mbps)
    assert 0.0 <= a.buffering_ratio <= 1.0
    assert a.p95_queue_delay_ms <= 75_000 * 8 / (1.1 * 2 * 2.0e6) * 1000 + 1  # the 75 kB queue


def test_viewers_start_jitter_is_drawn_per_seed() -> None:
    def startups(seed: int, jitter: float) -> list[float]:
        return scenario_viewers("cubic", viewers=2, bitrate_mbps=2.0, seed=seed,
                                duration=8.0, stagger_s=0.0, start_jitter_s=jitter).startups_s

    assert startups(2, 2.0) == startups(2, 2.0)
    assert startups(2, 2.0) != startups(3, 2.0)
    # Without jitter the two viewers open together; with it, up to 2 s later in no fixed
    # order, and never earlier.
    together = startups(2, 0.0)
    jittered = startups(2, 2.0)
    assert all(j >= t - 0.2 for j, t in zip(jittered, together, strict=True))
    assert jittered != together


def test_mis_span_several_ack_frames_at_a_short_rtt() -> None:
    # 13 ms RTT, ACKs every 10 packets or 3 ms: one RTT holds about four frames. After slow
    # start every MI lasts at least min_mi_acks measured ACK intervals.
    rx = Receiver(ack_every=10, max_ack_delay=0.003)
    sim, ctrl, events = _run("vivace", Link(16.5, 0.013, 300_000), until=6.0, receiver=rx)
    assert 0.0 < ctrl.ack_interval < 0.013
    mis = [e for e in events if e["type"] == "mi" and e["state"] != "starting"
           and e["decision"] not in ("stale", "early-reverse") and e["utility"] is not None]
    assert mis
    _, off, _ = _run("vivace", Link(16.5, 0.013, 300_000), until=6.0, receiver=rx,
                     params={"min_mi_acks": "0"})
    assert ctrl.mis_finished < off.mis_finished  # longer MIs, fewer of them



def test_outage_loses_every_packet_both_ways_then_acks_resume() -> None:
    link = Link(12.0, 0.03, 45_000, outages=[(2.0, 3.0)])
    sim, ctrl, _ = _run("cubic", link, until=6.0)
    acks = [t for t, _ in sim.flows[0].stats.delivered]
    # Nothing is acknowledged from one RTT into the outage until after it ends.
    assert not [t for t in acks if 2.03 < t < 3.0]
    assert [t for t in acks if t > 3.0]
    assert link.in_outage(2.5) and not link.in_outage(3.0)


def test_outage_recovery_resumes_near_the_rate_before() -> None:
    """A 2 s outage (`bench soak`'s): the MI timeouts halve the rate down to the floor on no
    evidence about capacity. Restarting slow start capped at the rate before the outage gets
    back to 80 % of it within OUTAGE_BOUND_S; climbing back by gradient steps takes longer."""
    on = scenario_outage("vivace", seed=1)
    off = scenario_outage("vivace", seed=1, params={"outage_timeouts": "0"})
    assert on.rate_before_mbps > 10.0
    assert on.recovery_s is not None and on.recovery_s <= OUTAGE_BOUND_S
    assert off.recovery_s is None or off.recovery_s > on.recovery_s + 0.5


def _drains_after_path_step(params: dict[str, str], *, after_ms: float) -> tuple[int, Any]:
    """`vivace` on a 20 Mbit/s path whose RTT steps from 20 to 80 ms at 4 s: the drain MIs
    that finished after `after_ms`, and the controller."""
    link = Link(20.0, 0.02, 300_000, rtt_schedule=[(4.0, 0.08)])
    _, ctrl, events = _run("vivace", link, until=14.0, params=params)
    return sum(1 for e in events if e["type"] == "mi" and e["decision"] == "drained"
               and e["t_ms"] > after_ms), ctrl


def test_a_drain_that_finds_a_longer_path_rebases_the_queue_floor() -> None:
    # The RTT steps from 20 to 80 ms at 4 s: the connection's min RTT keeps 20 ms, so every MI
    # seems to stand on a 60 ms queue. Without queue_drain_rebase the drains go on at
    # growing intervals, each at up to half the rate; with it, the second failed drain in a
    # row moves the floor to the longer path, where a queue of ours is still drained.
    off, _ = _drains_after_path_step({"queue_drain_rebase": "0"}, after_ms=4500)
    on, ctrl = _drains_after_path_step({"queue_drain_rebase": "1"}, after_ms=4500)
    assert ctrl.path_rebases >= 1 and ctrl._path_rtt_base is not None
    assert 0.08 <= ctrl._path_rtt_base < 0.09
    assert on < off


def test_drains_on_a_fixed_path_never_rebase() -> None:
    # 12 Mbit/s, 30 ms, one BDP of queue, browser-like ACKs: the drains remove queue of ours.
    _, ctrl, _ = _run("vivace", Link(12.0, 0.03, 45_000), until=20.0, receiver=BROWSER_HOST,
                      params={"queue_drain_rebase": "1"})
    assert ctrl.queue_drains > 0 and ctrl.path_rebases == 0


def test_a_path_step_moves_the_queue_floor_at_once() -> None:
    # The same 20 -> 80 ms step: path_step_ms sees every RTT sample after it stand above every
    # one before, so the floor moves with the step and no drain runs on the longer path.
    off, _ = _drains_after_path_step({}, after_ms=4000)
    on, ctrl = _drains_after_path_step({"path_step_ms": "5"}, after_ms=4000)
    assert ctrl.path_steps >= 1 and ctrl._path_rtt_base is not None
    assert 0.08 <= ctrl._path_rtt_base < 0.09
    assert off >= 3 and on == 0


def test_a_fixed_path_shows_no_path_step() -> None:
    # Browser-like ACKs and a busy receiver on one BDP of queue: queues and stalls only. (A
    # drain at half the rate empties a queue faster than sparse ACKs sample it, which can
    # read as a step down; a drain decides nothing.)
    _, ctrl, events = _run("vivace", Link(12.0, 0.03, 45_000), until=20.0,
                           receiver=BROWSER_HOST, params={"path_step_ms": "5"})
    assert ctrl.path_steps == 0 and ctrl.queue_drains > 0
    assert all(e["rtt_path_step_ms"] <= 0 for e in events if e["type"] == "mi")
    assert all(e["rtt_path_step_ms"] == 0 for e in events
               if e["type"] == "mi" and e["decision"] != "drained")


def test_viewers_share_more_evenly_when_overflow_loss_is_not_pooled() -> None:
    # Fig. 5.2 on the link model, 30 s, with viewers that open 0.5 s apart, idle a round
    # trip per segment and lose nothing to headers (session 20's model): the first flow
    # fills the 75 kB queue before the others start, and the three live in its overflow.
    # Pooled, the loss rates of a probe pair lose the sender's own share of the overflow,
    # and the viewers keep the unequal rates they left slow start at. With the harness's
    # stagger and the player's prefetch the queue is rarely full and the rule changes
    # little either way.
    def mean_jain(params: dict[str, str], **setup: Any) -> float:
        runs = [scenario_viewers("vivace", seed=seed, duration=30.0, params=params, **setup)
                for seed in (1, 2, 3, 4)]
        return sum(jain_index(r.throughputs_mbps) for r in runs) / len(runs)

    # Measured with the steps of its day: without session 36's hold on untested steps, which
    # slows the climbs into that overflow (with it the rule moves this model's Jain by 0.004),
    # and with both steps a share of the rate, which session 38's AIMD replaced (with it the
    # viewers converge either way: 0.891 against 0.867), and without session 56's packet
    # floor under the increase boundary (with it, 0.868 against 0.844), and without session
    # 62's autocorrelation in the noise test (with it, 0.843 against 0.838).
    overflow = {"stagger_s": 0.5, "prefetch": False, "payload_share": 1.0}
    unheld = {"hold_untested_increase": "0", **BEFORE_SESSION_56, **BEFORE_SESSION_62,
              **PROPORTIONAL_STEPS}
    assert mean_jain(unheld, **overflow) > mean_jain(
        {**unheld, "loss_pool_queue": "0"}, **overflow) + 0.03
    assert mean_jain({}) > mean_jain({"loss_pool_queue": "0"}) - 0.02


def test_the_default_gives_way_to_flows_that_join_a_full_link() -> None:
    # Fig. 5.2's link (3 x 15 Mbit/s x 1.1, 100 ms, 75 kB): one bulk flow holds it alone,
    # two more join at 2 s. With both steps a share of the rate (session 30's default) the
    # first flow keeps about 38 Mbit/s and the others stay at 4-7; with `vivace`'s AIMD
    # (a decrease stands, increases do not grow with the rate) it gives way.
    def mean_jain(params: dict[str, str]) -> float:
        jains = []
        for seed in (1, 2, 3):
            sim = Simulator(Link(49.5, 0.100, 75_000, loss=0.0001), seed=seed)
            for i in range(3):
                ctrl = create_controller("vivace", params, seed=seed * 10 + i)
                sim.add_flow(ctrl, start=0.0 if i == 0 else 2.0 + 0.05 * i)
            sim.run(24.0)
            jains.append(jain_index(report(sim, 14.0, 24.0).throughputs_mbps))
        return sum(jains) / len(jains)

    assert mean_jain({}) > 0.75
    assert mean_jain(PROPORTIONAL_STEPS) < 0.6


@pytest.mark.parametrize("option", ["rtt_gradient_minima", "rtt_gradient_minima_veto"])
def test_minima_gradient_ignores_host_stalls_below_capacity(option: str) -> None:
    # Fig. 5.1's link at 50 Mbit/s (55 Mbit/s, 80 ms, 300 kB) behind a receiver that stalls
    # 20 times a second. An MI sent below capacity cannot build a queue, so an RTT gradient
    # counted there is the stalls'; each one decides a probe pair against the rate.
    def stall_gradients(params: dict[str, str]) -> tuple[float, float]:
        sim, _, events = _run("vivace", Link(55.0, 0.080, 300_000, loss=0.0001), until=20.0,
                              receiver=BROWSER_HOST, params=params, seed=2)
        below = [e for e in events if e.get("type") == "mi" and e["t_ms"] > 5000
                 and not e["decision"].startswith("ignored")
                 and e["send_rate_bps"] < 0.93 * 55e6]
        counted = sum(1 for e in below if e["rtt_gradient"] > 0) / len(below)
        return counted, report(sim, 5.0, 20.0).utilization

    # Measured with the noise test of its day (session 62's autocorrelation already drops
    # most of these gradients: 0.0 of them counted with or without the minima).
    regression = stall_gradients(BEFORE_SESSION_62)
    minima = stall_gradients({**BEFORE_SESSION_62, option: "1"})
    assert minima[0] < 0.5 * regression[0]
    assert minima[1] > regression[1]


@pytest.mark.parametrize("option", ["rtt_gradient_minima", "rtt_gradient_minima_veto"])
def test_minima_gradient_keeps_video_at_50_mbps_playing(option: str) -> None:
    # Measured before session 56's slow start and packet floor: with them the default buffers
    # 0.29 % instead of 0.35 % on seed 3, within twice the option's 0.18 %. And before session
    # 62's autocorrelation in the noise test, with which the minima change nothing here.
    for seed in (1, 3):
        before = {**BEFORE_SESSION_56, **BEFORE_SESSION_62}
        regression = scenario_video("vivace", bitrate_mbps=50.0, seed=seed, duration=40.0,
                                    params=before)
        minima = scenario_video("vivace", bitrate_mbps=50.0, seed=seed, duration=40.0,
                                params={**before, option: "1"})
        assert minima.utilization > regression.utilization
        assert minima.buffering_ratio < 0.5 * regression.buffering_ratio


def test_autocorr_noise_test_widens_behind_a_stalling_host_only() -> None:
    # A host that stalls 20 times a second delays runs of ACKs together: the MIs' residuals
    # are positively autocorrelated, the widened test counts fewer gradients on MIs sent
    # below capacity, and the link is used more. A host that never stalls shows a small
    # autocorrelation (the pacer's own), so its test widens little.
    def run(receiver: Receiver | None, link: Link, autocorr: str
            ) -> tuple[float, float, float]:
        sim, _, events = _run("vivace", link, until=20.0, receiver=receiver,
                              params={"rtt_gradient_autocorr": autocorr}, seed=2)
        mis = [e for e in events if e.get("type") == "mi"]
        below = [e for e in mis if e["t_ms"] > 5000 and not e["decision"].startswith("ignored")
                 and e["send_rate_bps"] < 0.93 * link.rate_mbps * 1e6]
        counted = sum(1 for e in below if e["rtt_gradient"] > 0) / max(len(below), 1)
        rhos = sorted(e["rtt_residual_autocorr"] for e in mis
                      if e["rtt_residual_autocorr"] is not None)
        return counted, report(sim, 5.0, 20.0).utilization, rhos[len(rhos) // 2]

    fig51 = Link(55.0, 0.080, 300_000, loss=0.0001)
    plain = run(BROWSER_HOST, fig51, "0")
    widened = run(BROWSER_HOST, fig51, "1")
    assert plain[2] > 0.25 and widened[2] > 0.25
    assert widened[0] < plain[0] and widened[1] > plain[1]
    clean = run(None, Link(12.0, 0.030, 45_000), "1")
    assert clean[2] < 0.2

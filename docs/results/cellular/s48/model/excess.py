"""Per judged silence on the link model: the silence's length, the growth, and the first
post-silence packet's RTT above the min RTT (queue test with queue_rtts=100: logs only)."""
import statistics
import sys
from pathlib import Path

from pccstream.bench.cellular_arms import load_schedule
from pccstream.cc import ack_silence
from pccstream.cc.registry import create_controller
from pccstream.cc.sim import scenario_cellular

log: list[tuple[float, float, float]] = []
orig = ack_silence.AckSilences.on_acked


def on_acked(self, now, sent_time, min_rtt, growth_s=0.0):
    after = self._queue_test_from
    if after is not None and sent_time is not None and sent_time >= after:
        log.append((now - sent_time - min_rtt, self._growth_s, min_rtt))
    orig(self, now, sent_time, min_rtt, growth_s)


ack_silence.AckSilences.on_acked = on_acked
TRACES = Path(__file__).resolve().parents[5] / "infra" / "traces"
for name in sys.argv[1].split(","):
    log.clear()
    down = load_schedule(TRACES / f"{name}.down")
    up_path = TRACES / f"{name}.up"
    up = load_schedule(up_path) if up_path.exists() else None
    c = create_controller("vivace-lte", {"bdp_cap_hold_queue_rtts": "100"}, seed=1)
    r = scenario_cellular("vivace-lte", down, up_trace=up, controller=c)
    ex = sorted(e / m for e, _, m in log)
    q = lambda p: ex[min(len(ex) - 1, int(p * len(ex)))]
    print(f"{name}: {r.throughput_mbps:.2f} @ {r.p95_mm_signal_delay_ms:.0f}; n={len(ex)} excess/minRTT "
          f"p10 {q(.1):.2f} p25 {q(.25):.2f} p50 {q(.5):.2f} p75 {q(.75):.2f} p90 {q(.9):.2f}; "
          f"growth p50 {statistics.median(g for _, g, _ in log):.3f}s minrtt {log[0][2]*1000:.0f}ms", flush=True)

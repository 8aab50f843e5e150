"""Link model: each judged ACK silence against what the traces did in it. A silence is a
downlink outage when the downlink had no delivery opportunity for at least half of it,
else held ACKs (the uplink's gap). Usage: truth.py TRACE[,TRACE] ARM..."""
import bisect
import sys
from pathlib import Path

from pccstream.bench.cellular_arms import load_schedule
from pccstream.cc import ack_silence
from pccstream.cc.registry import create_controller
from pccstream.cc.sim import scenario_cellular

judged: list[list] = []  # [silence start, end, verdict]
orig_acked = ack_silence.AckSilences.on_acked
orig_verdict = ack_silence.AckSilences._verdict


def on_acked(self, now, sent_time, min_rtt, growth_s=0.0):
    before, prev = self._judging, self.last_ack_at
    orig_acked(self, now, sent_time, min_rtt, growth_s)
    if before is None and self._judging is not None and self._judging[1] == now:
        judged.append([prev, now, None])


def _verdict(self, *, held):
    for j in reversed(judged):
        if j[2] is None:
            j[2] = held
            break
    orig_verdict(self, held=held)


ack_silence.AckSilences.on_acked = on_acked
ack_silence.AckSilences._verdict = _verdict
TRACES = Path(__file__).resolve().parents[5] / "infra" / "traces"


def longest_gap(times_ms: list[int], period: int, a: float, b: float) -> float:
    """The longest stretch of [a, b] (s) without a delivery opportunity, in s."""
    lo, hi = int(a * 1000), int(b * 1000)
    base = (lo // period) * period
    ops = [base + t for t in times_ms] + [base + period + t for t in times_ms]
    i = bisect.bisect_left(ops, lo)
    last, gap = lo, 0
    while i < len(ops) and ops[i] <= hi:
        gap = max(gap, ops[i] - last)
        last = ops[i]
        i += 1
    return max(gap, hi - last) / 1000


for name in sys.argv[1].split(","):
    down = load_schedule(TRACES / f"{name}.down")
    up = load_schedule(TRACES / f"{name}.up")
    dt, period = list(down.times_ms), int(down.times_ms[-1])
    for arm in sys.argv[2:]:
        judged.clear()
        base, *kv = arm.split(":")
        c = create_controller(base, dict(x.split("=", 1) for x in kv), seed=1)
        r = scenario_cellular(base, down, up_trace=up, controller=c, seed=1)
        table = {(t, v): 0 for t in ("out", "held") for v in (True, False)}
        for start, end, verdict in judged:
            if verdict is None:
                continue
            # ACKs reach the sender ~ one way after delivery: shift the window back.
            gap = longest_gap(dt, period, start - 0.02, end - 0.02)
            truth = "out" if gap >= 0.5 * (end - start) else "held"
            table[(truth, verdict)] += 1
        print(f"{name} {arm}: {r.throughput_mbps:.2f} @ {r.p95_mm_signal_delay_ms:.0f} | "
              f"downlink out: judged held {table[('out', True)]}, out {table[('out', False)]}"
              f" | held ACKs: judged held {table[('held', True)]}, out {table[('held', False)]}",
              flush=True)

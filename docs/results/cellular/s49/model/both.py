"""Link model, vivace-lte with the last-packet test: per judged silence, the truth (as in
truth.py), the last-packet verdict, and what the first-packet test would have measured
(the first packet sent after the silence: RTT above the min RTT, against its allowance).
Usage: both.py TRACE"""
import sys

import truth as T  # patches AckSilences; the traces

from pccstream.bench.cellular_arms import load_schedule
from pccstream.cc import ack_silence
from pccstream.cc.registry import create_controller
from pccstream.cc.sim import scenario_cellular

rows: list[dict] = []
inner = ack_silence.AckSilences.on_acked


def on_acked(self, now, sent_time, min_rtt, growth_s=0.0):
    n = len(T.judged)
    inner(self, now, sent_time, min_rtt, growth_s)
    if len(T.judged) > n:
        rows.append({"j": T.judged[-1], "end": now, "growth": growth_s, "first": None,
                     "last_in": self._last_in, "last_ack": None, "minrtt": min_rtt})
    for r in rows[-3:]:
        if sent_time is not None and r["first"] is None and sent_time >= r["end"]:
            r["first"] = now - sent_time - min_rtt
        if sent_time is not None and r["last_ack"] is None and sent_time >= r["last_in"]:
            r["last_ack"] = (now, sent_time)


ack_silence.AckSilences.on_acked = on_acked
name = sys.argv[1]
down = load_schedule(T.TRACES / f"{name}.down")
up = load_schedule(T.TRACES / f"{name}.up")
dt, period = list(down.times_ms), int(down.times_ms[-1])
c = create_controller("vivace-lte", {"bdp_cap_hold_queue_last": "1"}, seed=1)
scenario_cellular("vivace-lte", down, up_trace=up, controller=c, seed=1)
for r in rows:
    start, end, verdict = r["j"]
    if verdict is None:
        continue
    gap = T.longest_gap(dt, period, start - 0.02, end - 0.02)
    truth = "out" if gap >= 0.5 * (end - start) else "held"
    m = r["minrtt"]
    la = r["last_ack"]
    late = (la[0] - max(end, la[1] + m)) / m if la else None
    first = r["first"] / m if r["first"] is not None else None
    allowed = max(4, 0.5 * r["growth"] / m)
    print(f"{truth:4} {'held' if verdict else 'out':4} silence {end-start:5.2f}s gap {gap:5.2f} "
          f"growth {r['growth']:.3f} last_in {end - r['last_in']:+.3f}s before end, "
          f"last late {late if late is None else round(late, 1)} "
          f"first {first if first is None else round(first, 1)} "
          f"(allowed {allowed:.1f})")

"""Link model, one trace, several seeds per arm: p95 signal delay (mm) and throughput, with
the sender's ACK-silence verdicts. Usage: seeds.py TRACE[,TRACE] SEEDS ARM...  (SEEDS: 1-5)"""
import statistics
import sys
from pathlib import Path

from pccstream.bench.cellular_arms import load_schedule
from pccstream.cc.registry import create_controller
from pccstream.cc.sim import scenario_cellular

TRACES = Path(__file__).resolve().parents[5] / "infra" / "traces"
lo, hi = (int(x) for x in sys.argv[2].split("-"))
for name in sys.argv[1].split(","):
    down = load_schedule(TRACES / f"{name}.down")
    up_path = TRACES / f"{name}.up"
    up = load_schedule(up_path) if up_path.exists() else None
    for arm in sys.argv[3:]:
        base, *kv = arm.split(":")
        delays, rates, shares = [], [], []
        for seed in range(lo, hi + 1):
            controller = create_controller(base, dict(x.split("=", 1) for x in kv), seed=seed)
            r = scenario_cellular(base, down, up_trace=up, controller=controller, seed=seed)
            delays.append(r.p95_mm_signal_delay_ms)
            rates.append(r.throughput_mbps)
            s = getattr(controller, "ack_silences", None)
            shares.append(f"{s.holds}/{s.outages}" if s else "-")
        print(f"{name} {arm}: median {statistics.median(rates):.2f} Mbit/s @ "
              f"{statistics.median(delays):.0f} ms | delays {[round(d) for d in delays]} "
              f"rates {[round(x, 2) for x in rates]} held/out {shares}", flush=True)

"""Session 47: `vivace-lte` with the bound's growth through ACK silences on the link model
(the contest's setup, ACKs shaped by each recording's .up trace), with the sender's verdicts
on its silences. Usage, from the repository root:

    PYTHONPATH=server .venv/bin/python docs/results/cellular/s47/model/silences.py \
        ATT-LTE-driving,TMobile-LTE-driving vivace-lte vivace-lte:bdp_cap_hold_gain=0.25
"""

import sys
from pathlib import Path

from pccstream.bench.cellular_arms import load_schedule
from pccstream.cc.registry import create_controller
from pccstream.cc.sim import scenario_cellular

TRACES = Path(__file__).resolve().parents[5] / "infra" / "traces"

names = sys.argv[1].split(",")
for name in names:
    down = load_schedule(TRACES / f"{name}.down")
    up_path = TRACES / f"{name}.up"
    up = load_schedule(up_path) if up_path.exists() else None
    for arm in sys.argv[2:]:
        base, *kv = arm.split(":")
        controller = create_controller(base, dict(x.split("=", 1) for x in kv), seed=1)
        r = scenario_cellular(base, down, up_trace=up, controller=controller)
        silences = getattr(controller, "ack_silences", None)
        verdicts = (f" held {silences.holds} out {silences.outages} share "
                    f"{silences.hold_share:.2f}" if silences else "")
        print(f"{name} {arm}: {r.throughput_mbps:.2f} Mbit/s @ {r.p95_mm_signal_delay_ms:.0f} "
              f"ms (p95 queue {r.p95_signal_delay_ms:.0f}){verdicts}", flush=True)

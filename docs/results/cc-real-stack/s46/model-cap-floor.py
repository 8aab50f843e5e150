"""Link model: vivace vs cap+floor on issue 4's 1-BDP link and two flows, seeds 1-10, both receivers."""
import statistics, sys
from pccstream.cc.sim import BROWSER_HOST, scenario_single, scenario_two_flows
CF = {"increase_boundary_max": "0.05", "decrease_to_capacity": "1", "decrease_to_capacity_window_s": "2"}
arms = {"vivace": {}, "cap+floor": CF, "cap": {"increase_boundary_max": "0.05"},
        "floor": {"decrease_to_capacity": "1", "decrease_to_capacity_window_s": "2"}}
for host, kw in (("model", {}), ("busy host", {"receiver": BROWSER_HOST, "pacing_quantum": 2})):
    for arm, params in arms.items():
        one = [scenario_single("vivace", seed=s, params=params, **kw) for s in range(1, 11)]
        two = [scenario_two_flows("vivace", seed=s, params=params, **kw) for s in range(1, 11)]
        med = statistics.median
        print(f"{host:9} {arm:10} 1-BDP util {med(r.utilization for r in one):.3f} "
              f"p95 infl {med(r.p95_rtt_inflation_ms for r in one):.2f} ms "
              f"(max {max(r.p95_rtt_inflation_ms for r in one):.2f}) | two flows Jain "
              f"median {med(r.jain for r in two):.3f} min {min(r.jain for r in two):.3f} "
              f"[{', '.join(f'{r.jain:.3f}' for r in two)}]", flush=True)

"""python -m pccstream.bench.cellular_arms: the link-model table of docs/baselines.md.

Sprout, Sprout-EWMA and RemyCC (each shipped table) against Cubic and BBR on the shipped
cellular traces, with `scenario_cellular` (the contest's setup: + 20 ms each way, one bulk
flow, infinite queue, one pass of the trace). Sprout's two arms also run on the link's true
delivery times instead of ACK-derived ones, which is what the ACK clock costs. Simulation
figures, not measurements.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from ..cc.base import Controller, SentPacket
from ..cc.registry import check_cc_spec
from ..cc.remy import TABLES
from ..cc.sim import CellularReport, TraceSchedule, scenario_cellular
from ..cc.sprout import Sprout
from ..cc.sprout_ewma import SproutEwma
from ..cc.tick_arrivals import DeliveryClock
from ..emulator.trace import load_trace
from ..errors import UserError
from ..paths import TRACES, data_path

TRACES_DIR = data_path(TRACES)
TRACES = ("Verizon-LTE-short", "TMobile-LTE-short", "ATT-LTE-driving")
ALL_TRACES = ("Verizon-LTE-short", "TMobile-LTE-short", "ATT-LTE-driving-2016", "ATT-LTE-driving",
              "TMobile-LTE-driving", "TMobile-UMTS-driving", "Verizon-EVDO-driving")


def true_delivery_time(packet: SentPacket) -> float | None:
    """The link model's bottleneck departure of `packet` (sim.SimPacket.delivered_time)."""
    return getattr(packet, "delivered_time", None)


# The link model's sender sits at the bottleneck's ingress: a packet queues from its send.
TRUE_DELIVERY = DeliveryClock(true_delivery_time, entry_offset_s=0.0)


Arm = tuple[str, str, dict[str, str], Callable[[], Controller] | None]

ARMS: list[Arm] = [
    ("cubic", "cubic", {}, None),
    ("bbr", "bbr", {}, None),
    ("sprout", "sprout", {}, None),
    ("sprout, true delivery times", "sprout", {},
     lambda: Sprout(clock=TRUE_DELIVERY)),
    ("sprout-ewma", "sprout-ewma", {}, None),
    ("sprout-ewma, true delivery times", "sprout-ewma", {},
     lambda: SproutEwma(clock=TRUE_DELIVERY)),
    *[(f"remy table={table}", "remy", {"table": table}, None) for table in TABLES],
]


def run_arm(arm: Arm, trace: TraceSchedule, *, duration: float | None = None,
            seed: int = 1, up_trace: TraceSchedule | None = None) -> CellularReport:
    _, name, params, build = arm
    return scenario_cellular(name, trace, params=params, duration=duration, seed=seed,
                             up_trace=up_trace,
                             controller=build() if build is not None else None)


def _registry_arm(spec: str) -> Arm:
    """A registered controller with parameters, checked before any trace runs."""
    name, params = check_cc_spec(spec)
    return (spec, name, params, None)


def load_schedule(path: Path) -> TraceSchedule:
    raw = load_trace(path)
    return TraceSchedule(raw.times, raw.counts)


def main() -> None:
    parser = argparse.ArgumentParser(description="link-model table of the seed arms")
    parser.add_argument("--traces", nargs="*", default=list(TRACES),
                        help=f"default: {' '.join(TRACES)}; all shipped: {' '.join(ALL_TRACES)}")
    parser.add_argument("--duration", type=float, default=None,
                        help="seconds (default: one pass of each trace)")
    parser.add_argument("--arms", nargs="*", default=None, metavar="LABEL",
                        help="only these rows (labels as in the table, e.g. sprout); any other "
                             "NAME[:KEY=VALUE...] runs that registered controller")
    parser.add_argument("--shaped-uplink", action="store_true",
                        help="send the ACKs through the trace's .up recording, as the real "
                             "stack's emulator does (traces without one keep a clean uplink)")
    args = parser.parse_args()
    known = {arm[0]: arm for arm in ARMS}
    try:
        arms = ARMS if args.arms is None else [known.get(label) or _registry_arm(label)
                                               for label in args.arms]
    except UserError as exc:
        parser.error(f"--arms: {exc}")
    for trace_name in args.traces:
        trace = load_schedule(TRACES_DIR / f"{trace_name}.down")
        up_path = TRACES_DIR / f"{trace_name}.up"
        up = load_schedule(up_path) if args.shaped_uplink and up_path.exists() else None
        print(f"\n{trace_name} ({trace.average_mbps():.2f} Mbit/s average, "
              f"{trace.period_s:.0f} s), link model, "
              f"{'ACKs shaped by the .up trace' if up else 'clean uplink'}\n")
        print("| arm | Mbit/s | p95 queue delay ms (per packet) | power | "
              "p95 signal delay ms (mm-throughput-graph) | power (mm) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for arm in arms:
            r = run_arm(arm, trace, duration=args.duration, up_trace=up)
            mm = r.p95_mm_signal_delay_ms
            print(f"| {arm[0]} | {r.throughput_mbps:.2f} | {r.p95_signal_delay_ms:.0f} | "
                  f"{r.power:.1f} | {mm:.0f} | "
                  f"{r.throughput_mbps * 1000 / mm if mm > 0 else 0.0:.1f} |", flush=True)


if __name__ == "__main__":
    main()

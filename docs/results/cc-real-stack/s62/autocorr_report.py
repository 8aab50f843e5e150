"""The RTT residuals' lag-1 autocorrelation (`rtt_residual_autocorr`, sessions 62+) in stored
MI telemetry, and how often each arm counted an RTT gradient on MIs that could not have
built a queue of their own.

Per arm: the MIs' autocorrelation (median and quartiles, after 5 s, outside slow start, 8+
samples), the per-viewer smoothed value the controller would hold (gain 1/8, its median over
each viewer's session), and, in `fig51` mode, the share of loss-free MIs sent below 0.93 x
capacity whose counted gradient (`rtt_gradient`, after the noise test) is above 0.

    python docs/results/cc-real-stack/s62/autocorr_report.py fig51|fig52 DB...
"""
import json
import statistics
import sys
import zlib
from collections import defaultdict

from pccstream.ab.store import Store
from pccstream.cc.vivace import AUTOCORR_GAIN


def quartiles(values: list[float]) -> str:
    if len(values) < 4:
        return "—"
    q = statistics.quantiles(values, n=4)
    return f"{q[1]:+.2f} ({q[0]:+.2f} to {q[2]:+.2f})"


def main() -> None:
    mode, dbs = sys.argv[1], sys.argv[2:]
    rho: dict[str, list[float]] = defaultdict(list)
    smoothed: dict[str, list[float]] = defaultdict(list)
    below: dict[str, list[bool]] = defaultdict(list)
    for db in dbs:
        store = Store(db, read_only=True)  # never writes beside committed results
        for arm, blob, capacity in store.conn.execute(
                "select arm, telemetry_z, capacity_mbps from runs"):
            if blob is None:
                continue
            for viewer in json.loads(zlib.decompress(blob)):
                ewma: float | None = None
                held: list[float] = []
                for e in viewer:
                    if e.get("type") != "mi":
                        continue
                    r = e.get("rtt_residual_autocorr")
                    useful = not e["decision"].startswith(("ignored", "reprobe", "drained"))
                    if r is not None and useful:
                        ewma = r if ewma is None else (1 - AUTOCORR_GAIN) * ewma + AUTOCORR_GAIN * r
                    if e["t_ms"] < 5000 or e["state"] == "starting":
                        continue
                    if ewma is not None:
                        held.append(ewma)
                    if r is not None:
                        rho[arm].append(r)
                    if (mode == "fig51" and useful and e["loss"] == 0
                            and e["send_rate_bps"] < 0.93 * capacity * 1e6):
                        below[arm].append(e["rtt_gradient"] > 0)
                if held:
                    smoothed[arm].append(statistics.median(held))
        store.close()
    print("| arm | MIs | MI autocorrelation, median (quartiles) | smoothed, median over viewers"
          " (quartiles) | loss-free MIs below 0.93 x capacity with a counted gradient |")
    print("| --- | --- | --- | --- | --- |")
    for arm in sorted(rho):
        share = (f"{sum(below[arm]) / len(below[arm]):.3f} of {len(below[arm])}"
                 if below[arm] else "—")
        print(f"| {arm} | {len(rho[arm])} | {quartiles(rho[arm])} | "
              f"{quartiles(smoothed[arm])} | {share} |")


if __name__ == "__main__":
    main()

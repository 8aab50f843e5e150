"""How often an MI's RTT gradient passes `vivace`'s noise test, by RTT, if the test counted at
most N of the MI's RTT samples as independent (`rtt_gradient_max_samples`).

Replays the test on stored MI telemetry (sessions 60+ carry `rtt_samples` and
`rtt_gradient_stderr`). MIs: the `vivace` arm, after 5 s, outside slow start, without loss.
`fig51`: only MIs sent below 0.93 x capacity, where no queue of the flow's own can grow;
`fig52`: every MI (three viewers share one queue).

    python docs/results/cc-real-stack/s61/noise_samples.py fig51 DB...
"""
import json
import sys
import zlib
from typing import Any

from pccstream.ab.store import Store
from pccstream.cc.registry import create_controller
from pccstream.cc.utility import filter_rtt_gradient
from pccstream.cc.vivace import Vivace

BINS = [(0, 25), (25, 45), (45, 70), (70, 1000)]


def load(mode: str, dbs: list[str]) -> list[dict[str, Any]]:
    mis: list[dict[str, Any]] = []
    for db in dbs:
        # Read-only: never writes, and leaves no -shm/-wal files beside committed results.
        store = Store(db, read_only=True)
        for arm, blob, capacity in store.conn.execute(
                "select arm, telemetry_z, capacity_mbps from runs"):
            if arm != "vivace" or blob is None:
                continue
            for viewer in json.loads(zlib.decompress(blob)):
                for e in viewer:
                    if (e.get("type") != "mi" or e["t_ms"] < 5000 or e["state"] == "starting"
                            or e["loss"] > 0 or e.get("rtt_gradient_stderr") is None
                            or e["rtt_samples"] < 3):
                        continue
                    if mode == "fig51" and e["send_rate_bps"] > 0.93 * capacity * 1e6:
                        continue
                    mis.append(e)
        store.close()
    return mis


def counted(e: dict[str, Any], vivace: Vivace) -> bool:
    """The controller's own filter and noise test (Vivace.mi_utility), on a stored MI."""
    gradient = filter_rtt_gradient(e["rtt_gradient_raw"], vivace.p.rtt_gradient_filter)
    return gradient > 0 and gradient > vivace._noise_bound(  # pyright: ignore[reportPrivateUsage]
        e["rtt_gradient_stderr"], e["rtt_samples"])


def main() -> None:
    mode, dbs = sys.argv[1], sys.argv[2:]
    mis = load(mode, dbs)
    print(f"{mode}: {len(mis)} MIs")
    print("| N | " + " | ".join(f"{lo}–{hi} ms" for lo, hi in BINS) + " | all |")
    for cap in (0, 30, 15, 10, 8, 6):
        vivace = create_controller("vivace", {"rtt_gradient_max_samples": str(cap)})
        assert isinstance(vivace, Vivace)
        shares = []
        for lo, hi in BINS + [(0, 10**9)]:
            sel = [e for e in mis if lo <= e["rtt_ms"] < hi]
            shares.append(f"{sum(counted(e, vivace) for e in sel) / max(len(sel), 1):.3f}")
        print(f"| {cap or 'off'} | " + " | ".join(shares) + " |")
    for lo, hi in BINS:
        sel = [e for e in mis if lo <= e["rtt_ms"] < hi]
        samples = sorted(e["rtt_samples"] for e in sel)
        if samples:
            print(f"{lo}–{hi} ms: {len(sel)} MIs, median {samples[len(samples) // 2]} RTT samples")


if __name__ == "__main__":
    main()

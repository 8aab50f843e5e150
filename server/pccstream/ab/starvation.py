"""The one rule that marks a run as CPU-starved (docs/ab.md, "CPU starvation").

On a 2-core machine Chromium (software video decode), the Python server and the Python emulator
share the CPU; a run in which any of them ran short measured the machine, not the controller.
The rule reads only stored run columns, so it can be re-evaluated on any database row.

A run is starved when ANY of these holds (thresholds below, each with its reason):

1. `dropped_frames − dropped_frames_near_stalls > 1 % × decoded_frames` — the player (frames
   dropped during a stall or within 1 s after it are the network's: the browser drops what
   arrived too late for its slot; without the column, all dropped frames count);
2. `event_loop_lag_p95_ms > 100` — the player's main thread;
3. `max(server_cpu_s, emulator_cpu_s) / cpu_window_s ≥ 0.95` — a single-threaded process;
4. `(browser_cpu_s + server_cpu_s + emulator_cpu_s) / (cpu_window_s × host_cpus) ≥ 0.95` — the host;
5. `loadavg_start ≥ 1.5 × host_cpus` — other load on the host when the run began;
6. `emulator_late_share ≥ 5 %` — the host stalled: the emulator's timers fired late (> 1 ms)
   over that share of the run, which no load average shows (a hypervisor holding the VM).

A condition whose inputs are missing (NULL) is not evaluated; with none evaluable the flag is
unknown (NULL), as for runs stored before these columns existed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

# At 30 fps, 1 % is a dropped frame every ~3 s, visible judder. The browser drops a frame when
# decoding/compositing missed its display slot, and also when playback resumes after a stall
# with frames that arrived past their slot: the player counts those apart.
DROPPED_FRAME_FRACTION = 0.01
# 100 ms is four periods of the player's 25 ms stall sampler and delays segment requests and
# appends; late in 5 % of ticks means the page's own loop, not the network, set the pace.
EVENT_LOOP_LAG_P95_MS = 100.0
# Server and emulator are single-threaded asyncio loops: at ≥ 95 % of a core on average they
# had no idle time, so packets and ACKs queued for the CPU, which looks like network delay.
PROCESS_CORE_FRACTION = 0.95
# The run's own processes kept every core busy: decode, compositor and pacing timers queued.
HOST_CPU_FRACTION = 0.95
# 50 % more runnable threads than cores at the start: something else competed (the previous
# run of this harness leaves at most about one per core in the 1-minute average).
LOAD_PER_CPU = 1.5
# A stall holds every process, then the sender's catch-up burst queues at the bottleneck. Once
# 5 % of the run was stalled, a p95 delay can be the host's alone, and a player lost that
# share of its delivery to the host, which is about its headroom at 1.1 x the bitrate.
HOST_STALL_SHARE = 0.05


class RunValues(Protocol):
    """A run record (dict) or a stored row (sqlite3.Row): values by column name."""

    def __getitem__(self, key: str, /) -> Any: ...


@dataclass(frozen=True)
class Starvation:
    """`starved` is None when no condition could be evaluated; `reasons` the ones that hold."""

    starved: bool | None
    reasons: tuple[str, ...]

    def columns(self) -> dict[str, Any]:
        """The stored columns `cpu_starved` (0/1/NULL) and `cpu_starved_reason`."""
        return {
            "cpu_starved": None if self.starved is None else int(self.starved),
            "cpu_starved_reason": "; ".join(self.reasons) or None,
        }


def _number(run: RunValues, key: str) -> float | None:
    try:
        value = run[key]
    except (KeyError, IndexError):
        return None
    return float(value) if isinstance(value, int | float) else None


def starvation(run: RunValues) -> Starvation:
    """Apply the rule (module doc) to a run record or a stored row."""
    reasons: list[str] = []
    evaluated = False

    dropped, decoded = _number(run, "dropped_frames"), _number(run, "decoded_frames")
    near_stalls = _number(run, "dropped_frames_near_stalls")
    if dropped is not None and decoded is not None and decoded > 0:
        evaluated = True
        where = " of frames"
        if near_stalls is not None:
            dropped = max(0.0, dropped - near_stalls)
            where = " of frames outside stalls"
        if dropped > DROPPED_FRAME_FRACTION * decoded:
            reasons.append(f"dropped {100 * dropped / decoded:.1f} %{where}")

    lag = _number(run, "event_loop_lag_p95_ms")
    if lag is not None:
        evaluated = True
        if lag > EVENT_LOOP_LAG_P95_MS:
            reasons.append(f"event-loop lag p95 {lag:.0f} ms")

    window = _number(run, "cpu_window_s")
    cpu = {name: _number(run, f"{name}_cpu_s") for name in ("browser", "server", "emulator")}
    if window is not None and window > 0:
        for name in ("server", "emulator"):
            seconds = cpu[name]
            if seconds is not None:
                evaluated = True
                if seconds / window >= PROCESS_CORE_FRACTION:
                    reasons.append(f"{name} {seconds / window:.2f} core")
        cpus = _number(run, "host_cpus")
        parts = [s for s in cpu.values() if s is not None]
        if cpus and parts:
            evaluated = True
            busy = sum(parts) / (window * cpus)
            if busy >= HOST_CPU_FRACTION:
                reasons.append(f"host {100 * busy:.0f} % busy")

    load, cpus = _number(run, "loadavg_start"), _number(run, "host_cpus")
    if load is not None and cpus:
        evaluated = True
        if load >= LOAD_PER_CPU * cpus:
            reasons.append(f"load {load:.2f} at start on {cpus:.0f} CPUs")

    stalled = _number(run, "emulator_late_share")
    if stalled is not None:
        evaluated = True
        if stalled >= HOST_STALL_SHARE:
            reasons.append(f"host stalled {100 * stalled:.1f} % of the run (emulator timers late)")

    return Starvation(bool(reasons) if evaluated else None, tuple(reasons))

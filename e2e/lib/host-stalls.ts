/**
 * How long this process was held from running while a test played: its own timer's lateness.
 * A virtual machine whose CPU the hypervisor deschedules stops every process at once (browser,
 * server, emulator and this runner), and no load average shows it; the emulator measures the
 * same thing for `pccstream ab` (docs/emulator.md, "Timer lateness"). A host stall longer than
 * a live player's slack stalls its playback by itself, so a test that counts stalls allows one
 * per such host stall and judges a latency percentile only when the host ran.
 */

/** Timer period, ms: short enough to see a stall of a few frames. */
const PERIOD_MS = 10;
/** Lateness above this counts toward the stalled share (as the emulator's `stalled_share`). */
const LATE_MS = 1;
/** The share of a run stalled from which its latency figures are the host's (docs/ab.md, condition 6). */
export const HOST_STALL_SHARE = 0.05;

export interface HostStalls {
  /** Wall time measured, ms. */
  measuredMs: number;
  /** Lateness past LATE_MS summed, over measuredMs. */
  stalledShare: number;
  maxLateMs: number;
  /** Episodes at least `stallMs` late (the threshold given to `stop`). */
  stalls: number;
}

export interface HostStallMeter {
  /** Stops measuring; `stallMs` is the lateness that counts as one stall of the thing measured. */
  stop(stallMs: number): HostStalls;
}

/** Starts measuring this process's timer lateness (performance.now(), every PERIOD_MS). */
export function startHostStallMeter(): HostStallMeter {
  const startedMs = performance.now();
  let lastMs = startedMs;
  const lates: number[] = [];
  const timer = setInterval(() => {
    const now = performance.now();
    lates.push(now - lastMs - PERIOD_MS);
    lastMs = now;
  }, PERIOD_MS);
  return {
    stop: (stallMs) => {
      clearInterval(timer);
      const measuredMs = performance.now() - startedMs;
      const stalled = lates.reduce((sum, late) => sum + Math.max(0, late - LATE_MS), 0);
      return {
        measuredMs,
        stalledShare: measuredMs > 0 ? stalled / measuredMs : 0,
        maxLateMs: Math.max(0, ...lates),
        stalls: lates.filter((late) => late >= stallMs).length,
      };
    },
  };
}

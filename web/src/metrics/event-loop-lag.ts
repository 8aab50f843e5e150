/**
 * Main-thread lag: how late a periodic timer fires. A page whose main thread is starved of CPU
 * (or blocked by long tasks) runs its timers late, and with them the player's 25 ms sampler and
 * its fetch/append loop, so the figure tells a CPU-starved viewer from a network-starved one.
 *
 * `EventLoopLag` is pure (fed scheduled/fired times); `watchEventLoop` is the browser glue.
 * Definitions in web/README.md (`eventLoopLagP95Ms`, `eventLoopLagMaxMs`).
 */

/** Timer period: twice the sampler's, so the probe costs nothing measurable. */
export const LAG_INTERVAL_MS = 50;
/**
 * Histogram bins of 1 ms up to this lag: bounded memory however long the page runs. A lag
 * above it counts as this value in the percentile (the maximum stays exact).
 */
export const LAG_HISTOGRAM_MAX_MS = 10_000;

export interface EventLoopLagSnapshot {
  /** Nearest-rank 95th percentile of the per-tick lateness, ms (1 ms resolution, floored). */
  eventLoopLagP95Ms: number | null;
  /** The largest lateness seen, ms. */
  eventLoopLagMaxMs: number | null;
}

export class EventLoopLag {
  private readonly bins = new Uint32Array(LAG_HISTOGRAM_MAX_MS + 1);
  private count = 0;
  private maxMs = 0;

  constructor(readonly intervalMs = LAG_INTERVAL_MS) {}

  /** A tick armed at `scheduledMs` for `intervalMs` that ran at `firedMs` (page clock, ms). */
  tick(scheduledMs: number, firedMs: number): void {
    const late = Math.max(0, firedMs - scheduledMs - this.intervalMs);
    if (!Number.isFinite(late)) return;
    this.bins[Math.min(LAG_HISTOGRAM_MAX_MS, Math.floor(late))]! += 1;
    this.count += 1;
    this.maxMs = Math.max(this.maxMs, late);
  }

  get samples(): number {
    return this.count;
  }

  percentile(q: number): number | null {
    if (this.count === 0) return null;
    const rank = Math.min(this.count, Math.max(1, Math.ceil(q * this.count)));
    let seen = 0;
    for (let ms = 0; ms < this.bins.length; ms += 1) {
      seen += this.bins[ms]!;
      if (seen >= rank) return ms;
    }
    return LAG_HISTOGRAM_MAX_MS;
  }

  snapshot(): EventLoopLagSnapshot {
    return {
      eventLoopLagP95Ms: this.percentile(0.95),
      eventLoopLagMaxMs: this.count === 0 ? null : this.maxMs,
    };
  }
}

/**
 * Arms a chain of `setTimeout(intervalMs)` (a chain, not setInterval, so each tick's lateness
 * is against its own arming time) and records every tick for which `active()` holds — the
 * session after startup. Returns a function that stops it.
 */
export function watchEventLoop(lag: EventLoopLag, active: () => boolean, now: () => number = () => performance.now()): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const arm = (): void => {
    const scheduled = now();
    timer = setTimeout(() => {
      if (active()) lag.tick(scheduled, now());
      arm();
    }, lag.intervalMs);
  };
  arm();
  return () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
}

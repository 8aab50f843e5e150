/**
 * Video freezes counted by WebRTC's rule (W3C webrtc-stats `freezeCount`, as libwebrtc's
 * VideoQualityObserver computes it), from the times frames are rendered: an interval between
 * two rendered frames is a freeze when it is at least max(3 × mean, mean + 150 ms), the mean
 * being that of the previous 30 intervals (needs 5 first). The live player reports it beside
 * its own stricter stall count so a comparison with the WebRTC arm counts alike.
 */

export const FREEZE_WINDOW_FRAMES = 30;
export const FREEZE_MIN_SAMPLES = 5;
export const FREEZE_MIN_INCREASE_MS = 150;

export interface FreezeSnapshot {
  freezeCount: number;
  /** Sum of the frozen intervals, ms. */
  totalFreezesDurationMs: number;
}

export class FreezeCounter {
  private intervals: number[] = [];
  private lastMs: number | null = null;
  private count = 0;
  private durationMs = 0;

  /** A new frame rendered at `renderedAtMs` (any monotonic ms clock). */
  onFrame(renderedAtMs: number): void {
    const last = this.lastMs;
    this.lastMs = renderedAtMs;
    if (last === null || renderedAtMs <= last) return;
    const interval = renderedAtMs - last;
    if (this.intervals.length >= FREEZE_MIN_SAMPLES) {
      const mean = this.intervals.reduce((a, b) => a + b, 0) / this.intervals.length;
      if (interval >= Math.max(3 * mean, mean + FREEZE_MIN_INCREASE_MS)) {
        this.count += 1;
        this.durationMs += interval;
      }
    }
    this.intervals.push(interval);
    if (this.intervals.length > FREEZE_WINDOW_FRAMES) this.intervals.shift();
  }

  snapshot(): FreezeSnapshot {
    return { freezeCount: this.count, totalFreezesDurationMs: this.durationMs };
  }
}

/** The freezes of a whole trace of render times (ms). */
export function countFreezes(renderedAtMs: readonly number[]): FreezeSnapshot {
  const counter = new FreezeCounter();
  for (const t of renderedAtMs) counter.onFrame(t);
  return counter.snapshot();
}

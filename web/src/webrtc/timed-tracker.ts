import { LatencyTracker } from '../latency/latency';
import type { TimedLatency } from './metrics';

/** Samples kept with their display time (≈ 17 min at 30 fps); older ones are dropped in halves. */
export const MAX_TIMED_SAMPLES = 30_000;

/** A LatencyTracker that also keeps (shown at, latency) of every new frame, for phase figures. */
export class TimedLatencyTracker extends LatencyTracker {
  timed: TimedLatency[] = [];
  private lastCaptureMs = -Infinity;

  override onFrame(code: number | null, shownAtMs: number): number | null {
    const latency = super.onFrame(code, shownAtMs);
    if (latency === null) return null;
    const capture = shownAtMs - latency;
    if (capture > this.lastCaptureMs) {
      this.lastCaptureMs = capture;
      if (this.timed.length >= MAX_TIMED_SAMPLES) this.timed = this.timed.slice(MAX_TIMED_SAMPLES / 2);
      this.timed.push({ shownAtMs, latencyMs: latency });
    }
    return latency;
  }
}

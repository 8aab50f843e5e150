/**
 * Glass-to-glass latency from burned-in frame codes.
 *
 * A code names a capture instant on a clock: capture = epoch + unit × (code + k × period) for
 * some whole number of wraps k. Live WebTransport: code = frame number in the looped file,
 * unit = 1 / fps, period = the file's frame count, epoch = the live channel's start (server
 * wall clock). WebRTC: code = milliseconds since the sender's epoch, unit = 1 ms, period = 2^24.
 * The tracker picks k so that the latency falls in [−WRAP_SLACK_MS, period − WRAP_SLACK_MS):
 * latencies longer than one period (60 s for the default live loop) cannot be told apart.
 * Sender and receiver must share a clock (same host, or NTP-synchronised ones).
 */

import { percentile } from './percentile';
import { FreezeCounter } from './freezes';

export interface CaptureClock {
  /** Wall-clock time (ms since the Unix epoch) of code 0 in wrap 0. */
  epochMs: number;
  /** Milliseconds per code step. */
  unitMs: number;
  /** Codes per wrap. */
  periodCodes: number;
  /** Code steps between consecutive frames of the source (1 for frame numbers, 1000/fps for ms). */
  codesPerFrame: number;
}

/** Clock errors (or a frame shown a little before its nominal capture) are tolerated up to this. */
export const WRAP_SLACK_MS = 5_000;
/** Latency samples kept (about 55 min at 30 fps); older ones are dropped in halves. */
export const MAX_SAMPLES = 100_000;

export function captureTimeMs(clock: CaptureClock, code: number, shownAtMs: number): number {
  const periodMs = clock.unitMs * clock.periodCodes;
  const base = clock.epochMs + clock.unitMs * code;
  const k = Math.floor((shownAtMs + WRAP_SLACK_MS - base) / periodMs);
  return base + k * periodMs;
}

export interface LatencySnapshot {
  /** Frames whose code was read when shown. */
  framesShown: number;
  /** Frames never shown between two shown ones (gaps in the codes). */
  framesSkipped: number;
  /** Shown frames with no readable code (not counted in the latency). */
  framesUnreadable: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  latencyMeanMs: number | null;
  latencyMaxMs: number | null;
  /** Latency of the last frame read. */
  latencyLastMs: number | null;
  /** Freezes by WebRTC's rule over the shown frames' times (freezes.ts). */
  freezeCount: number;
  totalFreezesDurationMs: number;
}

export class LatencyTracker {
  private samples: number[] = [];
  private shown = 0;
  private skipped = 0;
  private unreadable = 0;
  private lastCapture: number | null = null;
  private sum = 0;
  private max = -Infinity;
  private last: number | null = null;
  private freezes = new FreezeCounter();

  constructor(private clock: CaptureClock | null = null) {}

  setClock(clock: CaptureClock): void {
    this.clock = clock;
  }

  /** One frame shown at `shownAtMs` (wall clock, ms) carrying `code` (null: unreadable). */
  onFrame(code: number | null, shownAtMs: number): number | null {
    if (code === null || this.clock === null) {
      this.unreadable += 1;
      this.freezes.onFrame(shownAtMs);
      return null;
    }
    const clock = this.clock;
    const capture = captureTimeMs(clock, code, shownAtMs);
    const latency = shownAtMs - capture;
    if (this.lastCapture !== null) {
      if (capture <= this.lastCapture) return latency; // the same frame again (or an old one)
      const frameMs = clock.unitMs * clock.codesPerFrame;
      const gap = Math.round((capture - this.lastCapture) / frameMs) - 1;
      if (gap > 0) this.skipped += gap;
    }
    this.lastCapture = capture;
    this.shown += 1;
    this.freezes.onFrame(shownAtMs);
    if (this.samples.length >= MAX_SAMPLES) this.samples = this.samples.slice(MAX_SAMPLES / 2);
    this.samples.push(latency);
    this.sum += latency;
    this.max = Math.max(this.max, latency);
    this.last = latency;
    return latency;
  }

  /** Latency of the last frame read (cheap: no percentiles), ms. */
  get lastMs(): number | null {
    return this.last;
  }

  snapshot(): LatencySnapshot {
    const n = this.shown;
    return {
      framesShown: n,
      framesSkipped: this.skipped,
      framesUnreadable: this.unreadable,
      latencyP50Ms: percentile(this.samples, 0.5),
      latencyP95Ms: percentile(this.samples, 0.95),
      latencyMeanMs: n > 0 ? this.sum / n : null,
      latencyMaxMs: n > 0 ? this.max : null,
      latencyLastMs: this.last,
      ...this.freezes.snapshot(),
    };
  }
}

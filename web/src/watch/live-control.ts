/**
 * Live latency control, pure: where to start, when to seek forward (skip) or over a gap, and
 * the playback rate that keeps the playhead at the playout delay behind the live edge. All
 * times are media seconds; the live edge is (now − epoch) / 1000, the media time of a frame
 * captured now.
 *
 * The playout delay (live-playout.ts) is as early as the measured frame delays allow; the
 * target latency is its ceiling, and what skips are measured against.
 *
 * Latency here is the playhead's: liveEdge − currentTime (what the viewer sees lags capture by
 * that much). The glass-to-glass figures in the metrics come from the burned-in frame codes.
 */

import { bufferAhead, type Range } from '../media/ranges';

/** The constants (documented in web/README.md, "Live"). */
export const LIVE_CONTROL = {
  /** Latency above the playout delay + this: play faster (catch up). */
  CATCHUP_BAND_S: 0.15,
  /**
   * Latency below the playout delay − this: play slower. Small: below the playout delay the
   * next late keyframe stalls (above it only costs latency).
   */
  SLOW_BAND_S: 0.01,
  /** Catch-up rate: 1 + GAIN × (latency − playout delay), clamped to [MIN_CATCHUP_RATE, MAX_RATE]. */
  CATCHUP_GAIN: 1,
  MIN_CATCHUP_RATE: 1.02,
  MAX_RATE: 1.1,
  /** Slow rate: 1 + GAIN × (latency − playout delay), clamped to [MIN_RATE, SLOW_RATE]. */
  SLOW_GAIN: 1,
  SLOW_RATE: 0.97,
  MIN_RATE: 0.9,
  /** No catch-up with less than this buffered ahead (it would only stall sooner). */
  CATCHUP_MIN_AHEAD_S: 0.3,
  /** Latency above target + this: seek forward (skip). */
  SKIP_S: 1.0,
  /**
   * With the playout delay below the target, latency above the playout delay + this also
   * skips (to it): after joining, the playout delay is known about a second in, and catching
   * up over it at ≤ MAX_RATE would keep the latency high for seconds.
   */
  PLAYOUT_SKIP_S: 0.1,
  /** A skip must cut the latency by at least this much (half PLAYOUT_SKIP_S for a skip to the playout delay). */
  MIN_SKIP_GAIN_S: 0.25,
  /**
   * A skip lands at least this far before the end of the buffered data (when it can); at most
   * BAND_FRACTION_OF_TARGET of the latency it aims at (the playout delay has its own margin).
   */
  SEEK_MARGIN_S: 0.3,
  /** With less than this ahead in the current range and a later range: jump the gap (= the stall threshold). */
  GAP_AHEAD_S: 0.1,
  /**
   * Start once this much is buffered ahead of the start position: min(this, target / 2).
   * Joining at the live edge, liveEdge − target is usually before the first group's start; the
   * player then waits for this much of it (latency ≈ this at the start; the slow rate lets it
   * grow to the target).
   */
  START_AHEAD_S: 0.5,
  /**
   * Waiting this long with data buffered and liveEdge − target still not buffered with enough
   * ahead, start behind it instead: frames that all arrive later than target − START_AHEAD_S
   * never make that position playable, and the control loop catches up or skips once playing.
   * The join's own wait is one group's burst plus START_AHEAD_S.
   */
  START_PATIENCE_S: 1.0,
} as const;

/**
 * The catch-up band and buffer floor scale down with low playout delays (a 150 ms delay cannot
 * tolerate +150 ms): at most this fraction of the playout delay.
 */
export const BAND_FRACTION_OF_TARGET = 0.25;

/**
 * The catch-up band is at most this fraction of the playout delay: within a 25 % band the
 * latency rested at its top (+20–30 ms glass-to-glass at an 80–110 ms playout delay), and
 * catching up such a gap at 1.02× is invisible; the playout delay already covers the delays.
 */
export const CATCHUP_BAND_FRACTION = 0.1;

function scaled(limit: number, targetS: number): number {
  return Math.min(limit, BAND_FRACTION_OF_TARGET * targetS);
}

export type RateMode = 'hold' | 'catchup' | 'slow';

export interface ControlInput {
  /** Live edge, media seconds. */
  liveEdge: number;
  currentTime: number;
  /** Buffered ranges, ascending. */
  ranges: readonly Range[];
  /** The target latency: the ceiling (skips are measured against it). */
  targetS: number;
  /** Where to hold the latency (live-playout.ts), ≤ targetS (default: targetS). */
  playoutS?: number;
  /** The rate mode chosen last time (hysteresis). */
  mode: RateMode;
  /** Skip when the latency is more than this over target, s (default LIVE_CONTROL.SKIP_S). */
  skipS?: number;
}

export interface Decision {
  /** Seek here first (null: stay). */
  seekTo: number | null;
  reason: 'start' | 'skip' | 'gap' | null;
  rate: number;
  mode: RateMode;
}

const EPS = 1e-3;

/**
 * Before playback: the start position once enough is buffered, else null. The position is
 * liveEdge − target or, when that is not buffered, the start of the first range after it with
 * enough ahead (a group start: the latency is then below target and the slow rate lets it
 * grow). After `waitedS` ≥ START_PATIENCE_S with nothing such, it is the latest position with
 * enough ahead, behind liveEdge − target.
 */
export function startPosition(liveEdge: number, ranges: readonly Range[], targetS: number, waitedS = 0): number | null {
  const wanted = liveEdge - targetS;
  const need = Math.min(LIVE_CONTROL.START_AHEAD_S, targetS / 2);
  for (const r of ranges) {
    if (r.end < wanted) continue;
    const at = Math.max(wanted, r.start);
    if (r.end - at >= need) return at;
  }
  if (waitedS < LIVE_CONTROL.START_PATIENCE_S) return null;
  for (let i = ranges.length - 1; i >= 0; i--) {
    const r = ranges[i] as Range;
    if (r.end - r.start >= need) return r.end - need;
  }
  return null;
}

/**
 * Where to skip to: the buffered position closest to liveEdge − latencyS, kept SEEK_MARGIN_S
 * before the end of its range when the range allows; null when none is after `currentTime`.
 */
export function skipPosition(liveEdge: number, currentTime: number, ranges: readonly Range[], latencyS: number): number | null {
  const wanted = liveEdge - latencyS;
  const margin = scaled(LIVE_CONTROL.SEEK_MARGIN_S, latencyS);
  let best: number | null = null;
  for (const r of ranges) {
    if (r.end <= currentTime + EPS) continue;
    const latest = Math.max(r.start, r.end - margin);
    const q = Math.max(Math.max(r.start, currentTime), Math.min(wanted, latest));
    if (best === null || Math.abs(q - wanted) < Math.abs(best - wanted)) best = q;
  }
  return best;
}

/**
 * One control step while playing: skip (to the playout delay) when the latency is more than
 * `skipS` over the target or, with the playout delay below the target, PLAYOUT_SKIP_S over the
 * playout delay; else a rate that brings the latency to the playout delay.
 */
export function control(input: ControlInput): Decision {
  const { liveEdge, currentTime, ranges, targetS } = input;
  const playoutS = Math.min(targetS, input.playoutS ?? targetS);
  const C = LIVE_CONTROL;
  const latency = liveEdge - currentTime;

  const overTarget = latency > targetS + (input.skipS ?? C.SKIP_S);
  const overPlayout = playoutS < targetS - EPS && latency > playoutS + C.PLAYOUT_SKIP_S;
  if (overPlayout || overTarget) {
    const q = skipPosition(liveEdge, currentTime, ranges, playoutS);
    const minGain = overPlayout ? C.PLAYOUT_SKIP_S / 2 : C.MIN_SKIP_GAIN_S;
    // Below the target, a skip never lands nearer the edge than the playout delay (a group
    // start that has just arrived: the frames queued behind its keyframe would be late).
    const fresh = q !== null && !overTarget && q > liveEdge - playoutS + EPS;
    if (q !== null && !fresh && q - currentTime >= minGain) return { seekTo: q, reason: 'skip', rate: 1, mode: 'hold' };
  }

  const ahead = bufferAhead(ranges, currentTime);
  const catchupBand = Math.min(C.CATCHUP_BAND_S, CATCHUP_BAND_FRACTION * playoutS);
  const slowBand = scaled(C.SLOW_BAND_S, playoutS);
  const catchupAhead = Math.min(C.CATCHUP_MIN_AHEAD_S, 2 * scaled(C.CATCHUP_BAND_S, playoutS));
  if (ahead < Math.min(C.GAP_AHEAD_S, targetS / 2)) {
    const later = ranges.find((r) => r.start > currentTime + EPS);
    // Not before the later range's start is min(playout delay, target / 2) behind the live
    // edge: landing on a keyframe that has just arrived, the frames queued behind it would
    // come too late one after another (a stall each); waiting makes it one.
    if (later !== undefined && liveEdge - later.start >= Math.min(playoutS, targetS / 2) - EPS) {
      return { seekTo: later.start + EPS, reason: 'gap', rate: 1, mode: 'hold' };
    }
    if (later !== undefined) return { seekTo: null, reason: null, rate: 1, mode: 'hold' };
  }

  const err = latency - playoutS;
  let mode: RateMode = input.mode;
  if (mode === 'catchup' && (err <= 0 || ahead < catchupAhead)) mode = 'hold';
  if (mode === 'slow' && err >= 0) mode = 'hold';
  if (mode === 'hold') {
    if (err > catchupBand && ahead >= catchupAhead) mode = 'catchup';
    else if (err < -slowBand) mode = 'slow';
  }
  const rate =
    mode === 'catchup'
      ? Math.min(C.MAX_RATE, Math.max(C.MIN_CATCHUP_RATE, 1 + C.CATCHUP_GAIN * err))
      : mode === 'slow'
        ? Math.max(C.MIN_RATE, Math.min(C.SLOW_RATE, 1 + C.SLOW_GAIN * err))
        : 1;
  return { seekTo: null, reason: null, rate, mode };
}

import { describe, expect, it } from 'vitest';
import { LiveAbr, type AbrTrace } from './live-abr';
import { control, startPosition, type RateMode } from './live-control';
import { LIVE_PLAYOUT as P, PlayoutDelay, type JitterEstimator, type TransientRule } from './live-playout';
import type { Range } from '../media/ranges';
import { STALL_MIN_LOSS_MS } from '../metrics/playback';
import rttflap from './testdata/live-abr-rttflap.json';
import throttle from './testdata/live-abr-throttle.json';
import sixMbps from './testdata/live-abr-6mbps.json';
import rttflapNow from './testdata/live-abr-rttflap-s13.json';
import sixMbpsNow from './testdata/live-abr-6mbps-s13.json';
import rttflapAuto from './testdata/live-abr-rttflap-fec-auto-s28.json';

const FRAME_MS = 1000 / 30;

/** A live channel's frames into a PlayoutDelay: frame i (group ⌊i/15⌋) captured i frames after `startMs`, playable `delay(i)` ms later. */
class Frames {
  i = 0;
  readyMs = 0;
  constructor(
    readonly p: PlayoutDelay,
    readonly startMs = 0,
  ) {}
  /** The next `n` frames; returns the last one's ready time. */
  feed(n: number, delay: (i: number) => number): number {
    for (let k = 0; k < n; k++, this.i++) {
      const captureMs = this.startMs + this.i * FRAME_MS;
      this.readyMs = captureMs + delay(this.i);
      this.p.onFrame(Math.floor(this.i / 15), captureMs, this.readyMs);
    }
    return this.readyMs;
  }
}

/** 25 ms one way, +5 ms for a P-frame, +60 ms for the keyframe opening every 15-frame group. */
const keyframes = (i: number): number => 25 + (i % 15 === 0 ? 60 : 5);

describe('PlayoutDelay', () => {
  it('is the ceiling until a group of frames is measured', () => {
    const f = new Frames(new PlayoutDelay(300, -Infinity, 'sd', 'hold'));
    const t = f.feed(P.WARMUP_FRAMES - 1, keyframes);
    expect(f.p.warm).toBe(false);
    expect(f.p.delayS(t)).toBe(0.3);
    f.feed(1, keyframes);
    expect(f.p.warm).toBe(true);
  });

  it('is the largest delay (the keyframes) + the margin on a steady path', () => {
    const f = new Frames(new PlayoutDelay(300, -Infinity, 'sd', 'hold'));
    const t = f.feed(60, keyframes);
    expect(f.p.envelopeMs(t)).toBeCloseTo(85, 9);
    expect(f.p.jitterMs()).toBeCloseTo(0, 9);
    expect(f.p.delayS(t) * 1000).toBeCloseTo(85 + P.MARGIN_MS, 9);
  });

  it('with `diff`, σ from successive differences: as the standard deviation for independent noise, larger for delays that alternate group by group', () => {
    let seed = 11;
    const noise = (): number => {
      seed = (seed * 16807) % 2147483647; // Park–Miller: exact in doubles
      return seed / 2147483647;
    };
    const draws = Array.from({ length: P.JITTER_GROUPS }, () => 40 * noise());
    const sd = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    const diff = new Frames(new PlayoutDelay(1000, -Infinity, 'diff', 'hold'));
    const delay = (i: number): number => keyframes(i) + (i % 15 === 0 ? (draws[Math.floor(i / 15)] as number) : 0);
    sd.feed(15 * P.JITTER_GROUPS, delay);
    diff.feed(15 * P.JITTER_GROUPS, delay);
    expect(diff.p.jitterMs() / sd.p.jitterMs()).toBeGreaterThan(0.7);
    expect(diff.p.jitterMs() / sd.p.jitterMs()).toBeLessThan(1.4);
    // keyframes 85 and 125 ms late in turn: every difference is 40 ms, σ = 40 / √2
    const alternating = new Frames(new PlayoutDelay(1000, -Infinity, 'diff', 'hold'));
    alternating.feed(15 * P.JITTER_GROUPS, (i) => keyframes(i) + (Math.floor(i / 15) % 2 === 1 && i % 15 === 0 ? 40 : 0));
    expect(alternating.p.jitterMs()).toBeCloseTo(40 / Math.SQRT2, 9);
  });

  it('with `diff`, a path that moves between two levels adds its jump, not the distance between the levels the envelope holds', () => {
    // the one-way delay steps from 25 to 70 ms after 10 groups (video-rttflap's RTT, redrawn every 5 s)
    const delay = (i: number): number => keyframes(i) + (i >= 15 * 10 ? 45 : 0);
    const sd = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    const diff = new Frames(new PlayoutDelay(1000, -Infinity, 'diff', 'hold'));
    const t = sd.feed(15 * P.JITTER_GROUPS, delay);
    diff.feed(15 * P.JITTER_GROUPS, delay);
    expect(sd.p.jitterMs()).toBeCloseTo(22.5, 9); // Δ / 2: 2 σ adds the whole step again
    expect(diff.p.jitterMs()).toBeCloseTo(Math.sqrt(45 ** 2 / (2 * (P.JITTER_GROUPS - 1))), 9);
    expect(diff.p.delayS(t) * 1000).toBeCloseTo(130 + P.MARGIN_MS + P.JITTER_SIGMAS * diff.p.jitterMs(), 9);
    expect(sd.p.delayS(t) * 1000 - diff.p.delayS(t) * 1000).toBeGreaterThan(25);
  });

  it('adds JITTER_SIGMAS standard deviations of the groups\' largest delays', () => {
    const f = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    // keyframes 85 and 125 ms late in turn: σ = 20 ms
    const t = f.feed(15 * P.JITTER_GROUPS, (i) => keyframes(i) + (Math.floor(i / 15) % 2 === 1 && i % 15 === 0 ? 40 : 0));
    expect(f.p.jitterMs()).toBeCloseTo(20, 9);
    expect(f.p.delayS(t) * 1000).toBeCloseTo(125 + P.MARGIN_MS + P.JITTER_SIGMAS * 20, 9);
  });

  it('does not measure the frames captured before `fromCaptureMs` (the join burst)', () => {
    const p = new PlayoutDelay(300, 1000);
    new Frames(p, 0).feed(30, () => 400); // the group in progress, sent at once
    const t = new Frames(p, 1000).feed(30, keyframes);
    expect(p.envelopeMs(t)).toBeCloseTo(85, 9);
  });

  it('rises at once on a late frame; a rise the next group confirms is held HOLD_MS, then halves every HALF_LIFE_MS', () => {
    const f = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    f.feed(30, keyframes);
    const lateAt = f.feed(1, () => 200); // group 2's keyframe late...
    expect(f.p.envelopeMs(lateAt)).toBeCloseTo(200, 9);
    f.feed(14, keyframes);
    f.feed(1, () => 200); // ...and group 3's: the path got slower
    f.feed(14, keyframes);
    // more ordinary frames: the rise still counts in full during the hold...
    const until = (ms: number): number => f.feed(Math.floor((lateAt + ms - f.readyMs) / FRAME_MS), keyframes);
    expect(f.p.envelopeMs(until(P.HOLD_MS))).toBeCloseTo(200, 9);
    // ...then halves every HALF_LIFE_MS (the second largest: the first of the two), down to what the frames measure now
    expect(f.p.envelopeMs(lateAt + P.HOLD_MS + P.HALF_LIFE_MS)).toBeCloseTo(100, 6);
    until(P.HOLD_MS + 2 * P.HALF_LIFE_MS);
    expect(f.p.envelopeMs(lateAt + P.HOLD_MS + 2 * P.HALF_LIFE_MS)).toBeCloseTo(85, 6);
  });

  it('a lone late group counts in full until the next group is in, then as the second largest', () => {
    const f = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    f.feed(30, keyframes);
    let t = f.feed(15, (i) => (i === 33 ? 210 : keyframes(i))); // group 2: one frame held an RTT
    expect(f.p.envelopeMs(t)).toBeCloseTo(210, 9);
    t = f.feed(1, keyframes); // group 3's keyframe on time
    expect(f.p.envelopeMs(t)).toBeCloseTo(85, 9);
    // a second late group within the hold: the path does this; both count
    f.feed(14, keyframes);
    t = f.feed(16, (i) => (i === 63 ? 180 : keyframes(i)));
    expect(f.p.envelopeMs(t)).toBeCloseTo(180, 9);
  });

  it('a lone late group is not in σ once the next group is in; two late groups are', () => {
    const f = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    f.feed(45, keyframes);
    f.feed(15, (i) => (i === 48 ? 210 : keyframes(i))); // group 3: one frame held an RTT
    expect(f.p.jitterMs()).toBeGreaterThan(50); // the newest group: it may be the path's
    let t = f.feed(1, keyframes); // group 4's keyframe on time: group 3 was a lone one
    expect(f.p.jitterMs()).toBeCloseTo(0, 9);
    expect(f.p.delayS(t) * 1000).toBeCloseTo(85 + P.MARGIN_MS, 9);
    f.feed(14, keyframes);
    t = f.feed(16, (i) => (i === 78 ? 180 : keyframes(i))); // group 5 late too: both count
    expect(f.p.jitterMs()).toBeGreaterThan(30);
    expect(f.p.delayS(t) * 1000).toBeGreaterThan(180 + P.MARGIN_MS + 60);
  });

  it('a late group counts in full while the group after it is missing (lost)', () => {
    const p = new PlayoutDelay(1000, -Infinity, 'sd', 'hold');
    const frame = (group: number, k: number, delayMs: number): void => p.onFrame(group, 1_000_000 + (group * 15 + k) * FRAME_MS, 1_000_000 + (group * 15 + k) * FRAME_MS + delayMs);
    for (let g = 0; g < 3; g++) for (let k = 0; k < 15; k++) frame(g, k, k === 0 ? 85 : 30);
    frame(3, 0, 250);
    for (let k = 0; k < 15; k++) frame(5, k, k === 0 ? 85 : 30); // group 4 never came
    expect(p.envelopeMs(1_000_000 + 6 * 500)).toBeCloseTo(250, 9);
  });

  it('never exceeds the ceiling, and a delay beyond it decays from the ceiling', () => {
    const f = new Frames(new PlayoutDelay(300, -Infinity, 'sd', 'hold'));
    f.feed(30, keyframes);
    const t = f.feed(1, () => 2000); // an outage
    expect(f.p.delayS(t)).toBe(0.3);
    expect(f.p.envelopeMs(t)).toBe(300);
    expect(f.p.envelopeMs(t + P.HOLD_MS + P.HALF_LIFE_MS)).toBeCloseTo(150, 6);
  });

  it('rewarm: back to the ceiling until WARMUP_FRAMES more frames are measured', () => {
    const f = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    let t = f.feed(30, keyframes);
    expect(f.p.delayS(t)).toBeLessThan(0.3);
    f.p.rewarm();
    expect(f.p.delayS(t)).toBe(1);
    t = f.feed(P.WARMUP_FRAMES, (i) => 25 + (i % 15 === 0 ? 120 : 10)); // a larger rendition
    expect(f.p.jitterMs()).toBeGreaterThan(0);
    expect(f.p.delayS(t) * 1000).toBeCloseTo(145 + P.MARGIN_MS + P.JITTER_SIGMAS * f.p.jitterMs(), 9);
  });

  it('with `transient=drop`, the groups of a switch up\'s ramp stop counting once a later group is in', () => {
    // 10 steady groups, a switch up, then the sender's ramp holds two groups' keyframes 150 ms more
    const ramp = (i: number): number => keyframes(i) + (i >= 150 && i < 180 && i % 15 === 0 ? 150 : 0);
    const drop = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'drop'));
    const hold = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    for (const f of [drop, hold]) {
      f.feed(150, keyframes);
      f.p.rewarm(750_000, 1_500_000);
    }
    let t = drop.feed(30, ramp);
    hold.feed(30, ramp);
    // while the ramp's groups are the newest they count
    expect(drop.p.envelopeMs(t)).toBeCloseTo(235, 9);
    t = drop.feed(15, ramp);
    hold.feed(15, ramp);
    expect(drop.p.envelopeMs(t)).toBeCloseTo(85, 9);
    expect(drop.p.delayS(t) * 1000).toBeCloseTo(85 + P.MARGIN_MS, 9);
    expect(hold.p.envelopeMs(t)).toBeCloseTo(235, 9); // held for HOLD_MS
  });

  it('with `transient=drop`, a higher delay that persists past the ramp still counts, and the first groups after the join are a ramp too', () => {
    const drop = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'drop'));
    drop.feed(150, keyframes);
    drop.p.rewarm(750_000, 1_500_000);
    const t = drop.feed(45, (i) => keyframes(i) + (i >= 150 ? 40 : 0)); // the new rendition's keyframes: 40 ms later, all three groups
    expect(drop.p.envelopeMs(t)).toBeCloseTo(125, 9);
    const join = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'drop'));
    const u = join.feed(45, (i) => keyframes(i) + (i < 30 && i % 15 === 0 ? 120 : 0));
    expect(join.p.envelopeMs(u)).toBeCloseTo(85, 9);
  });

  it('with `transient=drop`, one hold across a group boundary is one late episode: its two groups count as the third largest once the next group is in', () => {
    // a 170 ms hold at frame 164: the last frame of group 10 and the first frames of group 11 drain late
    const hold = (i: number): number => keyframes(i) + Math.max(0, 170 - 33 * Math.abs(i - 164)) * (i >= 164 ? 1 : 0);
    const drop = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'drop'));
    const held = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    drop.feed(180, hold);
    held.feed(180, hold);
    const t = drop.feed(1, hold); // group 12's keyframe
    held.feed(1, hold);
    expect(held.p.envelopeMs(t)).toBeGreaterThan(150); // not a lone group: held
    expect(drop.p.envelopeMs(t)).toBeCloseTo(85, 9);
    // `drop` is the default
    const byDefault = new Frames(new PlayoutDelay(1000));
    byDefault.feed(181, hold);
    expect(byDefault.p.envelopeMs(t)).toBeCloseTo(85, 9);
    // two adjacent late groups and then more: the path's, held
    const worse = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'drop'));
    const u = worse.feed(195, (i) => keyframes(i) + (i >= 150 && i % 15 === 0 ? 100 : 0));
    expect(worse.p.envelopeMs(u)).toBeCloseTo(185, 9);
  });

  it('rewarm on a switch up: the envelope above the base delay scaled by the bitrate ratio until the new frames are measured', () => {
    const f = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    let t = f.feed(30, keyframes); // envelope 85 ms, quickest frame 30 ms (a P-frame), σ 0
    expect(f.p.excessMs()).toBeCloseTo(55, 9);
    f.p.rewarm(1_500_000, 2_500_000); // the ABR's decision
    expect(f.p.delayS(t) * 1000).toBeCloseTo(30 + (55 * 5) / 3 + P.MARGIN_MS, 9);
    t = f.feed(10, keyframes); // the old rendition's last frames
    f.p.rewarm(1_500_000, 2_500_000); // its init segment appended: the same allowance
    expect(f.p.delayS(t) * 1000).toBeCloseTo(30 + (55 * 5) / 3 + P.MARGIN_MS, 9);
    f.p.rewarm(2_500_000, 3_000_000); // a second switch before the first is measured: from the measured 1500k
    expect(f.p.delayS(t) * 1000).toBeCloseTo(30 + 55 * 2 + P.MARGIN_MS, 9);
    t = f.feed(P.WARMUP_FRAMES, (i) => 25 + (i % 15 === 0 ? 110 : 10)); // measured: back to the envelope
    expect(f.p.warm).toBe(true);
    expect(f.p.delayS(t) * 1000).toBeCloseTo(135 + P.MARGIN_MS + P.JITTER_SIGMAS * f.p.jitterMs(), 9);
  });

  it('rewarm before the envelope was ever trusted (or without bitrates): the ceiling', () => {
    const f = new Frames(new PlayoutDelay(300, -Infinity, 'sd', 'hold'));
    const t = f.feed(5, keyframes);
    f.p.rewarm(300_000, 1_500_000);
    expect(f.p.delayS(t)).toBe(0.3);
    const g = new Frames(new PlayoutDelay(300, -Infinity, 'sd', 'hold'));
    const u = g.feed(30, keyframes);
    g.p.rewarm();
    expect(g.p.delayS(u)).toBe(0.3);
  });

  it('after a switch up is decided, the old rendition\'s last frames do not warm it up; cancelSwitch lets them', () => {
    const f = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    let t = f.feed(30, keyframes);
    f.p.rewarm(1_500_000, 2_500_000);
    for (let k = 0; k < P.WARMUP_FRAMES; k++, f.i++) f.p.onFrame(Math.floor(f.i / 15), f.i * FRAME_MS, (t = f.i * FRAME_MS + keyframes(f.i)), 1_500_000);
    expect(f.p.warm).toBe(false);
    expect(f.p.delayS(t) * 1000).toBeCloseTo(30 + (55 * 5) / 3 + P.MARGIN_MS, 9);
    f.p.cancelSwitch(); // switched down instead
    for (let k = 0; k < P.WARMUP_FRAMES; k++, f.i++) f.p.onFrame(Math.floor(f.i / 15), f.i * FRAME_MS, (t = f.i * FRAME_MS + keyframes(f.i)), 1_500_000);
    expect(f.p.warm).toBe(true);
    expect(f.p.delayS(t) * 1000).toBeCloseTo(85 + P.MARGIN_MS, 9);
  });

  it('a switch up scales the envelope of when it was decided; the new frames count unscaled (above it if larger)', () => {
    const p = new PlayoutDelay(1000, -Infinity, 'sd', 'hold');
    const frame = (i: number, delayMs: number, bps: number): number => {
      p.onFrame(Math.floor(i / 15), i * FRAME_MS, i * FRAME_MS + delayMs, bps);
      return i * FRAME_MS + delayMs;
    };
    let t = 0;
    for (let i = 0; i < 30; i++) t = frame(i, keyframes(i), 1_000_000); // envelope 85, base 30
    p.rewarm(1_000_000, 2_000_000);
    expect(p.delayS(t) * 1000).toBeCloseTo(30 + 2 * 55 + P.MARGIN_MS, 9);
    t = frame(30, 100, 2_000_000); // the new keyframe: within the allowance, which stays
    expect(p.delayS(t) * 1000).toBeCloseTo(30 + 2 * 55 + P.MARGIN_MS, 9);
    t = frame(31, 190, 2_000_000); // beyond it: the measured delay (+ σ) rules
    expect(p.delayS(t) * 1000).toBeCloseTo(190 + P.JITTER_SIGMAS * p.jitterMs() + P.MARGIN_MS, 9);
  });

  it('a switch up scales only the keyframes\' excess over their group\'s quickest frame, not the path\'s delay changes', () => {
    // the path's one-way delay flips between 25 and 70 ms every 5 s (video-rttflap); keyframes +30 ms
    const f = new Frames(new PlayoutDelay(1000, -Infinity, 'sd', 'hold'));
    const t = f.feed(30 * 20, (i) => (Math.floor(i / 150) % 2 === 1 ? 70 : 25) + (i % 15 === 0 ? 35 : 5));
    expect(f.p.excessMs()).toBeCloseTo(30, 9);
    const before = f.p.delayS(t) * 1000;
    f.p.rewarm(750_000, 1_500_000);
    // the keyframes double: +30 ms more, not twice the 75 ms the envelope holds above the quickest frame
    expect(f.p.delayS(t) * 1000).toBeCloseTo(before + 30, 9);
  });

  it('live ABR\'s start-up: scaled for the switch it may make from the first measured frame, not the ceiling', () => {
    const f = new Frames(new PlayoutDelay(300, -Infinity, 'sd', 'hold'));
    f.p.anticipate(300_000, 2_500_000);
    expect(f.p.delayS(0)).toBe(0.3); // nothing measured yet
    const t = f.feed(3, (i) => 20 + (i % 15 === 0 ? 10 : 0)); // the first measured group's keyframe and two frames
    expect(f.p.warm).toBe(false);
    expect(f.p.delayS(t) * 1000).toBeCloseTo(20 + (2_500_000 / 300_000) * 10 + P.MARGIN_MS, 9);
    // the start-up's pick: its basis is what the start-up measured
    f.p.rewarm(300_000, 1_500_000);
    f.p.anticipate();
    expect(f.p.delayS(t) * 1000).toBeCloseTo(20 + 5 * 10 + P.MARGIN_MS, 9);
  });

  it('keeps the groups of KEEP_MS over a long run', () => {
    const p = new PlayoutDelay(300, -Infinity, 'sd', 'hold');
    let seed = 7;
    const noise = (): number => {
      seed = (seed * 16807) % 2147483647; // Park–Miller: exact in doubles
      return seed / 2147483647;
    };
    new Frames(p).feed(30 * 600, (i) => keyframes(i) + 20 * noise()); // 10 minutes
    expect((p as unknown as { groups: Map<number, unknown> }).groups.size).toBeLessThanOrEqual(P.KEEP_MS / 500 + 2);
  });
});

interface Arrival {
  captureMs: number;
  arrivalMs: number;
  group: number;
  bitrateBps: number;
}

interface PlayoutRun {
  /**
   * Stalls after the start, by the player's rule (metrics/playback.ts): an episode under one
   * frame buffered ahead in which the playhead fell STALL_MIN_LOSS_MS behind the clock.
   */
  stalls: number;
  /** Time the playhead waited, ms. */
  stallMs: number;
  /** Playhead latency every 50 ms after the start, ms. */
  latencyMs: number[];
  /** The playout delay every 50 ms, ms. */
  playoutMs: number[];
}

function pct(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
}

/**
 * The live player's decisions on a timeline of frame arrivals, without MSE: frames are
 * playable on arrival, the buffer is the frames contiguous from the playhead, the playhead
 * moves at the control's rate and never past the buffer's end; the control runs every 50 ms.
 * `fixed`: the playout delay is the target (the set-point player this one replaced).
 * `abr`: the trace's live ABR is replayed alongside, and its start-up and up-switches rewarm
 * the playout delay as live.ts does.
 */
function simulate(arrivals: Arrival[], targetS: number, opts: { fixed?: boolean; trace?: AbrTrace; jitter?: JitterEstimator; transient?: TransientRule } = {}): PlayoutRun {
  const sorted = [...arrivals].sort((a, b) => a.arrivalMs - b.arrivalMs);
  const first = sorted[0] as Arrival;
  const lastArrivalMs = (sorted[sorted.length - 1] as Arrival).arrivalMs;
  // Not the group in progress when joining (the burst).
  const fromCaptureMs = Math.min(...sorted.filter((a) => a.group > first.group).map((a) => a.captureMs));
  const playout = new PlayoutDelay(targetS * 1000, fromCaptureMs, opts.jitter, opts.transient);
  const trace = opts.trace;
  const allowed = new Set(trace?.allowed ?? []);
  const abr = trace ? new LiveAbr(trace.bitratesBps, { groupS: trace.groupS, targetS: trace.targetS, initial: trace.initial, allowed: (i) => allowed.has(i) }) : null;
  const events = trace?.events ?? [];
  const bitrates = trace?.bitratesBps ?? [];
  let nextArrival = 0;
  let nextEvent = 0;
  let lastBitrate = first.bitrateBps;
  const frames: number[] = []; // arrived frames (capture ms / FRAME_MS), sorted
  let rs: Range[] = [];
  let p: number | null = null; // the playhead, s (media time = capture time)
  let mode: RateMode = 'hold';
  let rate = 1;
  let episodeLossMs: number | null = null; // in a low episode: how far the playhead fell behind
  const out: PlayoutRun = { stalls: 0, stallMs: 0, latencyMs: [], playoutMs: [] };
  const containing = (x: number): Range | undefined => rs.find((r) => x >= r.start - 1e-6 && x < r.end);
  for (let step = 0; first.arrivalMs + 10 * step <= lastArrivalMs; step++) {
    const t = first.arrivalMs + 10 * step;
    for (; nextEvent < events.length && abr !== null; nextEvent++) {
      const e = events[nextEvent] as AbrTrace['events'][number];
      if (e.arrivalMs > t) break;
      if (e.type === 'chunk') {
        abr.onChunk(e);
        continue;
      }
      const before = abr.rendition;
      const d = abr.onGroupEnd(e.group, e.completed, { latencyS: e.latencyS, bufferS: e.bufferS });
      if (d !== null && (bitrates[d.rendition] ?? 0) > (bitrates[before] ?? 0)) playout.rewarm(bitrates[before], bitrates[d.rendition]);
      else if (d !== null) playout.cancelSwitch();
    }
    let changed = false;
    for (; nextArrival < sorted.length && (sorted[nextArrival] as Arrival).arrivalMs <= t; nextArrival++) {
      const a = sorted[nextArrival] as Arrival;
      const f = Math.round(a.captureMs / FRAME_MS);
      const at = frames.findIndex((x) => x > f);
      frames.splice(at === -1 ? frames.length : at, 0, f);
      changed = true;
      if (a.bitrateBps > lastBitrate) playout.rewarm(lastBitrate, a.bitrateBps);
      lastBitrate = a.bitrateBps;
      playout.onFrame(a.group, a.captureMs, a.arrivalMs, a.bitrateBps);
    }
    if (changed) {
      rs = [];
      for (const f of frames) {
        const last = rs[rs.length - 1];
        const start = (f * FRAME_MS) / 1000;
        if (last && start <= last.end + 1e-6) last.end = Math.max(last.end, start + FRAME_MS / 1000);
        else rs.push({ start, end: start + FRAME_MS / 1000 });
      }
    }
    if (step % 5 === 0) {
      if (abr?.startingUp) playout.anticipate(lastBitrate, Math.max(...abr.ladder.map((i) => bitrates[i] as number)));
      else playout.anticipate();
      const playoutS = opts.fixed ? targetS : playout.delayS(t);
      if (p === null) {
        p = startPosition(t / 1000, rs, targetS);
      } else {
        const d = control({ liveEdge: t / 1000, currentTime: p, ranges: rs, targetS, playoutS, mode, skipS: 0.25 });
        mode = d.mode;
        rate = d.rate;
        if (d.seekTo !== null) p = d.seekTo;
        out.latencyMs.push(t - p * 1000);
        out.playoutMs.push(playoutS * 1000);
      }
    }
    if (p !== null) {
      const r = containing(p);
      const before = p;
      p = Math.min(p + (rate * 10) / 1000, r ? r.end : p);
      if ((r ? r.end - before : 0) < 1 / 30 - 1e-6) {
        const lost = 10 - ((p - before) * 1000) / rate;
        const lostMs = lost > 1e-6 ? lost : 0;
        out.stallMs += lostMs;
        const wasStall = episodeLossMs !== null && episodeLossMs >= STALL_MIN_LOSS_MS;
        episodeLossMs = (episodeLossMs ?? 0) + lostMs;
        if (!wasStall && episodeLossMs >= STALL_MIN_LOSS_MS) out.stalls += 1;
      } else {
        episodeLossMs = null;
      }
    }
  }
  return out;
}

/** `n` frames at 30 fps from capture 0 (15-frame groups), each `delay(i)` ms late. */
function synthetic(n: number, delay: (i: number) => number, bitrateBps = 2_500_000): Arrival[] {
  return Array.from({ length: n }, (_, i) => ({ captureMs: 1_000_000 + i * FRAME_MS, arrivalMs: 1_000_000 + i * FRAME_MS + delay(i), group: Math.floor(i / 15), bitrateBps }));
}

function traceArrivals(trace: AbrTrace): Arrival[] {
  return trace.events.flatMap((e) => (e.type === 'chunk' ? [{ captureMs: e.captureMs, arrivalMs: e.arrivalMs, group: e.group, bitrateBps: trace.bitratesBps[e.rendition] as number }] : []));
}

describe('the playout delay on arrival timelines (the control of live-control.ts, no MSE)', () => {
  it('on a steady path plays at the keyframes\' delay + the margin, far below the target, without a stall', () => {
    const run = simulate(synthetic(30 * 60, keyframes), 0.3);
    expect(run.stalls).toBe(0);
    const settled = run.latencyMs.slice(run.latencyMs.length / 4);
    expect(run.stallMs).toBe(0);
    expect(pct(settled, 0.95)).toBeLessThan(85 + P.MARGIN_MS + 40);
    expect(pct(settled, 0.05)).toBeGreaterThan(85);
    // the set-point player held the target instead
    const fixed = simulate(synthetic(30 * 60, keyframes), 0.3, { fixed: true });
    expect(pct(fixed.latencyMs.slice(fixed.latencyMs.length / 4), 0.5)).toBeGreaterThan(250);
  });

  it('is below the target from about 2 s in (so a run\'s p95 is not its start)', () => {
    const run = simulate(synthetic(30 * 60, keyframes), 0.3);
    const fromTwoSeconds = run.latencyMs.slice(2000 / 50);
    expect(pct(fromTwoSeconds, 0.95)).toBeLessThan(200);
  });

  it('rides out a 40 ms rise of the path delay with at most one stall, then plays later', () => {
    const run = simulate(synthetic(30 * 40, (i) => keyframes(i) + (i >= 30 * 20 ? 40 : 0)), 0.3);
    expect(run.stalls).toBeLessThanOrEqual(1);
    expect(pct(run.playoutMs.slice(-100), 0.5)).toBeCloseTo(125 + P.MARGIN_MS, 0);
  });

  it('never plans above the target', () => {
    for (const [trace, target] of [
      [rttflap, 0.3],
      [throttle, 0.5],
      [sixMbps, 0.3],
    ] as const) {
      const run = simulate(traceArrivals(trace as unknown as AbrTrace), target, { trace: trace as unknown as AbrTrace });
      expect(Math.max(...run.playoutMs)).toBeLessThanOrEqual(target * 1000 + 1e-9);
    }
  });

  // Traces recorded with the session-7 server (web/src/watch/testdata/live-abr-*.json, not -s13).
  // The collapse (20 → 1.2 Mbit/s) stalls whatever the player does; playing nearer the edge
  // when it comes (443 ms instead of 500: σ no longer holds a lone late group from before)
  // splits its first 0.3 s of waiting into three counted stalls (two with σ over every group,
  // one holding the target), for 2 % more stall time. On the 6 Mbit/s trace that server's controller took a group to reach the
  // start-up's pick (its first 2500k keyframe 132 ms late, the scaled allowance 133 ms): 30 ms
  // waited at the switch; and its 2500k keyframes overflowed the 1-BDP queue every few
  // seconds, so a late group's repeat often came after σ had let the lone one go: two waits of
  // 1–3 ms became 23–28 ms, neither a stall. These figures are `transient=hold`'s; the default,
  // `drop`, forgets the late episodes of these paths sooner and stalls once more on each
  // (rttflap 0 → 1, throttle 3 → 4, 6 Mbit/s 1 → 2, 23–103 ms more waiting).
  for (const [name, trace, target, extraStalls, extraStallMs] of [
    ['video-rttflap (300 ms target)', rttflap, 0.3, 0, 50],
    ['the 20 → 1.2 Mbit/s throttle (500 ms target)', throttle, 0.5, 2, 50],
    ['live-6mbps-40ms-1bdp (300 ms target)', sixMbps, 0.3, 0, 140],
  ] as const) {
    it(`on the recorded ${name} trace stalls about as much as holding the target, at a lower latency`, () => {
      const t = trace as unknown as AbrTrace;
      const arrivals = traceArrivals(t);
      const run = simulate(arrivals, target, { trace: t, transient: 'hold' });
      const fixed = simulate(arrivals, target, { fixed: true, trace: t });
      expect(run.stalls).toBeLessThanOrEqual(fixed.stalls + extraStalls);
      expect(run.stallMs).toBeLessThanOrEqual(1.1 * fixed.stallMs + extraStallMs);
      expect(pct(run.latencyMs, 0.5)).toBeLessThanOrEqual(pct(fixed.latencyMs, 0.5) + 1);
      const dropped = simulate(arrivals, target, { trace: t, transient: 'drop' });
      expect(dropped.stalls).toBeLessThanOrEqual(run.stalls + 1);
      expect(dropped.stallMs).toBeLessThanOrEqual(run.stallMs + 110);
    });
  }

  // Traces recorded with the session-13 server and player (40 s each, live ABR up to 2500k).
  it('on the recorded session-13 video-rttflap trace: one stall (a lost packet held group 38 for 210 ms) and a p95 under 150 ms', () => {
    const t = rttflapNow as unknown as AbrTrace;
    const run = simulate(traceArrivals(t), 0.3, { trace: t });
    expect(run.stalls).toBeLessThanOrEqual(1);
    expect(run.stallMs).toBeLessThan(150);
    expect(pct(run.latencyMs, 0.5)).toBeLessThan(140);
    // the start plays below the target from the first measured group, and the lone late group
    // is held for 10 s neither in the envelope nor in σ (191 ms with it in σ)
    expect(pct(run.latencyMs, 0.95)).toBeLessThan(150);
  });

  // Traces recorded since (session 13's live-6mbps-40ms-1bdp and video-rttflap; session 28's
  // video-rttflap with `fec=auto`, the A/B harness's first block): estimating σ from successive
  // differences plays lower without more stalls. On the session-7 traces above (keyframes 3–4 ×
  // a frame, the 2500k rung on a 2.75 Mbit/s link) it stalls once more on each.
  for (const [name, trace] of [
    ['session-13 video-rttflap', rttflapNow],
    ['session-13 live-6mbps-40ms-1bdp', sixMbpsNow],
    ['session-28 video-rttflap, fec=auto', rttflapAuto],
  ] as const) {
    it(`with \`diff\`, on the recorded ${name} trace: a p95 no higher, no more stalls`, () => {
      const t = trace as unknown as AbrTrace;
      const sd = simulate(traceArrivals(t), 0.3, { trace: t, transient: 'hold' });
      const diff = simulate(traceArrivals(t), 0.3, { trace: t, jitter: 'diff', transient: 'hold' });
      expect(diff.stalls).toBeLessThanOrEqual(sd.stalls);
      expect(pct(diff.latencyMs, 0.95)).toBeLessThanOrEqual(pct(sd.latencyMs, 0.95));
      expect(pct(diff.playoutMs, 0.5)).toBeLessThanOrEqual(pct(sd.playoutMs, 0.5));
    });
  }

  for (const [name, trace] of [
    ['session-13 video-rttflap', rttflapNow],
    ['session-13 live-6mbps-40ms-1bdp', sixMbpsNow],
    ['session-28 video-rttflap, fec=auto', rttflapAuto],
  ] as const) {
    it(`with \`transient=drop\`, on the recorded ${name} trace: a p95 no higher, no more stalls`, () => {
      const t = trace as unknown as AbrTrace;
      const hold = simulate(traceArrivals(t), 0.3, { trace: t, transient: 'hold' });
      const drop = simulate(traceArrivals(t), 0.3, { trace: t, transient: 'drop' });
      expect(drop.stalls).toBeLessThanOrEqual(hold.stalls);
      expect(pct(drop.latencyMs, 0.95)).toBeLessThanOrEqual(pct(hold.latencyMs, 0.95));
    });
  }

  it('on the recorded session-13 live-6mbps-40ms-1bdp trace: no stall, p95 under 100 ms', () => {
    const t = sixMbpsNow as unknown as AbrTrace;
    const run = simulate(traceArrivals(t), 0.3, { trace: t });
    expect(run.stalls).toBe(0);
    expect(pct(run.latencyMs, 0.95)).toBeLessThan(100);
  });
});

import { describe, expect, it } from 'vitest';
import { BAND_FRACTION_OF_TARGET, CATCHUP_BAND_FRACTION, LIVE_CONTROL as C, control, skipPosition, startPosition, type ControlInput } from './live-control';

const base: ControlInput = { liveEdge: 100, currentTime: 99, ranges: [{ start: 95, end: 99.95 }], targetS: 1, mode: 'hold' };

describe('startPosition', () => {
  it('starts target behind the live edge when that is buffered with enough ahead', () => {
    expect(startPosition(100, [{ start: 98.5, end: 99.9 }], 1)).toBe(99);
  });
  it('starts at the group start when liveEdge − target is before the data', () => {
    expect(startPosition(100, [{ start: 99.4, end: 99.95 }], 1)).toBe(99.4);
  });
  it('waits while too little is buffered ahead of the start', () => {
    expect(startPosition(100, [{ start: 99.5, end: 99.9 }], 1)).toBeNull();
    expect(startPosition(100, [], 1)).toBeNull();
    // a small target needs less: min(START_AHEAD_S, target / 2)
    expect(startPosition(100, [{ start: 99.7, end: 99.86 }], 0.3)).toBeCloseTo(99.7, 9);
  });
  it('looks past a range with too little ahead to a later one that has enough', () => {
    expect(startPosition(100, [{ start: 98.5, end: 99.2 }, { start: 99.3, end: 99.95 }], 1)).toBe(99.3);
  });
  it('after START_PATIENCE_S, starts behind the wanted position when every frame arrives too late for it', () => {
    const lagging = [{ start: 97, end: 99.3 }]; // 0.7 s behind the edge: 99 never has 0.5 s ahead
    expect(startPosition(100, lagging, 1, C.START_PATIENCE_S - 0.01)).toBeNull();
    expect(startPosition(100, lagging, 1, C.START_PATIENCE_S)).toBeCloseTo(99.3 - C.START_AHEAD_S, 9);
    // the latest range with enough, not a short newer one
    expect(startPosition(100, [{ start: 97, end: 98.9 }, { start: 99.05, end: 99.3 }], 1, C.START_PATIENCE_S)).toBeCloseTo(98.4, 9);
    expect(startPosition(100, [{ start: 99.05, end: 99.3 }], 1, C.START_PATIENCE_S)).toBeNull();
  });
  it('ignores ranges that end before the wanted position', () => {
    expect(startPosition(100, [{ start: 90, end: 91 }, { start: 99.4, end: 99.95 }], 1)).toBe(99.4);
  });
});

describe('skipPosition', () => {
  it('is liveEdge − target inside a range, kept a margin before its end', () => {
    expect(skipPosition(100, 95, [{ start: 95, end: 99.95 }], 1)).toBe(99);
    expect(skipPosition(100, 95, [{ start: 95, end: 99.1 }], 1)).toBeCloseTo(99.1 - Math.min(C.SEEK_MARGIN_S, BAND_FRACTION_OF_TARGET), 9);
    // aiming at a low latency, the margin is a share of it
    expect(skipPosition(100, 95, [{ start: 95, end: 99.86 }], 0.15)).toBeCloseTo(99.86 - BAND_FRACTION_OF_TARGET * 0.15, 9);
  });
  it('prefers the range nearest the wanted position; a later range starts at its start', () => {
    expect(skipPosition(100, 95, [{ start: 95, end: 96 }, { start: 99.5, end: 99.9 }], 1)).toBe(99.5);
  });
  it('is null when nothing is buffered after the playhead', () => {
    expect(skipPosition(100, 96, [{ start: 95, end: 96 }], 1)).toBeNull();
  });
});

describe('control', () => {
  it('holds rate 1 within the band', () => {
    expect(control(base)).toEqual({ seekTo: null, reason: null, rate: 1, mode: 'hold' });
    expect(control({ ...base, currentTime: 99 - Math.min(C.CATCHUP_BAND_S, CATCHUP_BAND_FRACTION * base.targetS) + 0.01 }).rate).toBe(1);
  });

  it('catches up proportionally above the band, up to MAX_RATE, until latency is back at target', () => {
    let d = control({ ...base, currentTime: 98.8, ranges: [{ start: 95, end: 99.9 }] }); // 0.2 s over
    expect(d.mode).toBe('catchup');
    expect(d.rate).toBeCloseTo(Math.min(C.MAX_RATE, 1 + C.CATCHUP_GAIN * 0.2), 9);
    d = control({ ...base, currentTime: 98.94, mode: 'catchup' }); // 0.06 s over
    expect(d.rate).toBeCloseTo(Math.max(C.MIN_CATCHUP_RATE, 1 + C.CATCHUP_GAIN * 0.06), 9);
    d = control({ ...base, currentTime: 98.3, ranges: [{ start: 95, end: 99.9 }] }); // 0.7 s over
    expect(d.rate).toBe(C.MAX_RATE);
    // inside the band again, but still above target: keeps catching up (hysteresis), gently
    d = control({ ...base, currentTime: 98.99, mode: 'catchup' });
    expect(d.mode).toBe('catchup');
    expect(d.rate).toBe(C.MIN_CATCHUP_RATE);
    d = control({ ...base, currentTime: 99.005, mode: 'catchup' });
    expect(d).toMatchObject({ mode: 'hold', rate: 1 });
  });

  it('does not catch up with little buffered ahead (it would stall)', () => {
    const d = control({ ...base, currentTime: 98.5, ranges: [{ start: 95, end: 98.7 }] });
    expect(d).toMatchObject({ mode: 'hold', rate: 1, seekTo: null });
  });

  it('slows below the (narrow) band, more the further below, until latency is back at target', () => {
    let d = control({ ...base, currentTime: 99.5, ranges: [{ start: 95, end: 99.9 }] });
    expect(d).toMatchObject({ mode: 'slow', rate: C.MIN_RATE });
    d = control({ ...base, currentTime: 99.05, ranges: [{ start: 95, end: 99.9 }], mode: 'slow' });
    expect(d.mode).toBe('slow');
    expect(d.rate).toBeCloseTo(1 + C.SLOW_GAIN * -0.05, 9);
    d = control({ ...base, currentTime: 99.005, ranges: [{ start: 95, end: 99.9 }], mode: 'slow' });
    expect(d).toMatchObject({ mode: 'slow', rate: C.SLOW_RATE });
    d = control({ ...base, currentTime: 98.99, ranges: [{ start: 95, end: 99.9 }], mode: 'slow' });
    expect(d).toMatchObject({ mode: 'hold', rate: 1 });
    // within SLOW_BAND_S below: hold
    expect(control({ ...base, currentTime: 99 + C.SLOW_BAND_S / 2 }).mode).toBe('hold');
  });

  it('skips forward when latency exceeds target + SKIP_S and data is buffered nearer the edge', () => {
    const d = control({ ...base, currentTime: 97.5, ranges: [{ start: 95, end: 99.9 }] });
    expect(d).toMatchObject({ reason: 'skip', seekTo: 99, rate: 1 });
  });

  it('does not skip for a negligible gain; waits when starving', () => {
    const d = control({ ...base, currentTime: 97.5, ranges: [{ start: 95, end: 97.6 }] });
    expect(d.seekTo).toBeNull();
  });

  it('jumps a gap left by dropped groups', () => {
    const ranges = [{ start: 95, end: 97 }, { start: 97.5, end: 99.9 }];
    const d = control({ ...base, currentTime: 96.95, liveEdge: 98.4, ranges });
    expect(d.reason).toBe('gap');
    expect(d.seekTo).toBeCloseTo(97.5, 2);
    // in no range at all (the playhead sits in the gap)
    expect(control({ ...base, currentTime: 97.2, liveEdge: 98.4, ranges }).reason).toBe('gap');
    // enough ahead: not yet
    expect(control({ ...base, currentTime: 96.5, liveEdge: 98.4, ranges }).seekTo).toBeNull();
  });

  it('waits at a gap until the later range starts min(playout delay, target / 2) behind the edge', () => {
    const ranges = [{ start: 95, end: 97 }, { start: 97.5, end: 97.55 }]; // its keyframe just in
    const at = { ...base, currentTime: 96.99, ranges, targetS: 0.3, playoutS: 0.12 };
    expect(control({ ...at, liveEdge: 97.56 })).toMatchObject({ seekTo: null, rate: 1 });
    expect(control({ ...at, liveEdge: 97.62 }).seekTo).toBeCloseTo(97.5, 2);
  });
});

describe('low targets', () => {
  it('scale the catch-up and slow bands with the target', () => {
    // 100 ms target: band = 10 ms, so 60 ms late with 60 ms ahead is already catch-up
    const late = control({ liveEdge: 100, currentTime: 99.84, ranges: [{ start: 99, end: 99.9 }], targetS: 0.1, mode: 'hold' });
    expect(late.mode).toBe('catchup');
    expect(late.rate).toBeGreaterThan(1);
    const early = control({ liveEdge: 100, currentTime: 99.95, ranges: [{ start: 99, end: 99.99 }], targetS: 0.1, mode: 'hold' });
    expect(early.mode).toBe('slow');
    // a 1 s target: a 100 ms catch-up band
    expect(control({ ...base, currentTime: 98.95, ranges: [{ start: 95, end: 99.95 }] }).mode).toBe('hold');
    expect(control({ ...base, currentTime: 98.85, ranges: [{ start: 95, end: 99.95 }] }).mode).toBe('catchup');
  });
});

describe('the playout delay as the set point, the target as the ceiling', () => {
  const at = (latencyS: number, extra: Partial<ControlInput> = {}): ControlInput => ({
    liveEdge: 100,
    currentTime: 100 - latencyS,
    ranges: [{ start: 95, end: 99.97 }],
    targetS: 0.3,
    playoutS: 0.15,
    mode: 'hold',
    ...extra,
  });

  it('holds at the playout delay, not the target', () => {
    expect(control(at(0.15))).toEqual({ seekTo: null, reason: null, rate: 1, mode: 'hold' });
    // below the target, but above the playout delay + its band: catch up
    const d = control(at(0.2));
    expect(d.mode).toBe('catchup');
    expect(d.rate).toBeCloseTo(1 + C.CATCHUP_GAIN * 0.05, 9);
    // below the playout delay: slow down
    expect(control(at(0.12)).mode).toBe('slow');
  });

  it('scales the catch-up band with the playout delay', () => {
    const band = CATCHUP_BAND_FRACTION * 0.15;
    expect(control(at(0.15 + band - 0.005)).mode).toBe('hold');
    expect(control(at(0.15 + band + 0.005)).mode).toBe('catchup');
  });

  it('skips to the playout delay when the latency is PLAYOUT_SKIP_S over it (after joining)', () => {
    const d = control(at(0.3));
    expect(d.reason).toBe('skip');
    expect(d.seekTo).toBeCloseTo(100 - 0.15, 9);
    // not for less than that
    expect(control(at(0.15 + C.PLAYOUT_SKIP_S - 0.01)).seekTo).toBeNull();
    // nor for a gain under half of it (too little buffered nearer the edge)
    expect(control(at(0.3, { ranges: [{ start: 95, end: 99.76 }] })).seekTo).toBeNull();
  });

  it('with the playout delay at the target, skips only skipS over the target', () => {
    expect(control(at(0.45, { playoutS: 0.3, skipS: 0.25 })).seekTo).toBeNull();
    expect(control(at(0.56, { playoutS: 0.3, skipS: 0.25, ranges: [{ start: 95, end: 99.97 }] })).reason).toBe('skip');
  });

  it('never aims above the target', () => {
    expect(control(at(0.3, { playoutS: 0.5 }))).toMatchObject({ rate: 1, mode: 'hold' });
    expect(control(at(0.26, { playoutS: 0.5 })).mode).toBe('slow');
  });
});

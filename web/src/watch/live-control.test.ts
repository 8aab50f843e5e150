import { describe, expect, it } from 'vitest';
import { LIVE_CONTROL as C, control, skipPosition, startPosition, type ControlInput } from './live-control';

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
  it('ignores ranges that end before the wanted position', () => {
    expect(startPosition(100, [{ start: 90, end: 91 }, { start: 99.4, end: 99.95 }], 1)).toBe(99.4);
  });
});

describe('skipPosition', () => {
  it('is liveEdge − target inside a range, kept a margin before its end', () => {
    expect(skipPosition(100, 95, [{ start: 95, end: 99.95 }], 1)).toBe(99);
    expect(skipPosition(100, 95, [{ start: 95, end: 99.1 }], 1)).toBeCloseTo(99.1 - C.SEEK_MARGIN_S, 9);
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
    expect(control({ ...base, currentTime: 99 - C.CATCHUP_BAND_S + 0.01 }).rate).toBe(1);
  });

  it('catches up proportionally above the band, up to MAX_RATE, until latency is back at target', () => {
    let d = control({ ...base, currentTime: 98.8, ranges: [{ start: 95, end: 99.9 }] }); // 0.2 s over
    expect(d.mode).toBe('catchup');
    expect(d.rate).toBeCloseTo(1 + C.CATCHUP_GAIN * 0.2, 9);
    d = control({ ...base, currentTime: 98.3, ranges: [{ start: 95, end: 99.9 }] }); // 0.7 s over
    expect(d.rate).toBe(C.MAX_RATE);
    // inside the band again, but still above target: keeps catching up (hysteresis), gently
    d = control({ ...base, currentTime: 98.95, mode: 'catchup' });
    expect(d.mode).toBe('catchup');
    expect(d.rate).toBe(C.MIN_CATCHUP_RATE);
    d = control({ ...base, currentTime: 99.01, mode: 'catchup' });
    expect(d).toMatchObject({ mode: 'hold', rate: 1 });
  });

  it('does not catch up with little buffered ahead (it would stall)', () => {
    const d = control({ ...base, currentTime: 98.5, ranges: [{ start: 95, end: 98.7 }] });
    expect(d).toMatchObject({ mode: 'hold', rate: 1, seekTo: null });
  });

  it('slows below the band until latency is back at target', () => {
    let d = control({ ...base, currentTime: 99.5, ranges: [{ start: 95, end: 99.9 }] });
    expect(d).toMatchObject({ mode: 'slow', rate: C.SLOW_RATE });
    d = control({ ...base, currentTime: 99.1, ranges: [{ start: 95, end: 99.9 }], mode: 'slow' });
    expect(d).toMatchObject({ mode: 'slow', rate: C.SLOW_RATE });
    d = control({ ...base, currentTime: 98.99, ranges: [{ start: 95, end: 99.9 }], mode: 'slow' });
    expect(d).toMatchObject({ mode: 'hold', rate: 1 });
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
});

describe('low targets', () => {
  it('scale the catch-up and slow bands with the target', () => {
    // 100 ms target: band = 25 ms, so 60 ms late with 60 ms ahead is already catch-up
    const late = control({ liveEdge: 100, currentTime: 99.84, ranges: [{ start: 99, end: 99.9 }], targetS: 0.1, mode: 'hold' });
    expect(late.mode).toBe('catchup');
    expect(late.rate).toBeGreaterThan(1);
    const early = control({ liveEdge: 100, currentTime: 99.95, ranges: [{ start: 99, end: 99.99 }], targetS: 0.1, mode: 'hold' });
    expect(early.mode).toBe('slow');
    // a 1 s target keeps the 150 ms bands
    expect(control({ ...base, currentTime: 98.9, ranges: [{ start: 95, end: 99.95 }] }).mode).toBe('hold');
  });
});

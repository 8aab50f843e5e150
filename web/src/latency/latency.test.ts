import { describe, expect, it } from 'vitest';
import { decodeCodeImage, encodeCodeImage } from './framecode';
import { captureTimeMs, LatencyTracker, type CaptureClock } from './latency';
import { percentile } from './percentile';

const live: CaptureClock = { epochMs: 1_000_000, unitMs: 1000 / 30, periodCodes: 1800, codesPerFrame: 1 };
const webrtc: CaptureClock = { epochMs: 5_000, unitMs: 1, periodCodes: 2 ** 24, codesPerFrame: 1000 / 30 };

describe('frame code image', () => {
  it('round-trips codes', () => {
    for (const code of [0, 1, 1799, 123456, 2 ** 24 - 1]) expect(decodeCodeImage(encodeCodeImage(code))).toBe(code);
  });
  it('rejects a picture without contrast', () => {
    expect(decodeCodeImage(new Uint8ClampedArray(96 * 8 * 4).fill(128))).toBeNull();
    expect(decodeCodeImage(new Uint8ClampedArray(4))).toBeNull();
  });
});

describe('captureTimeMs', () => {
  it('resolves wraps to the most recent capture', () => {
    // frame 10 of the third loop, shown 250 ms later
    const capture = live.epochMs + (2 * 1800 + 10) * live.unitMs;
    expect(captureTimeMs(live, 10, capture + 250)).toBeCloseTo(capture, 6);
  });
  it('tolerates a frame shown slightly before its nominal capture', () => {
    const capture = live.epochMs + 100 * live.unitMs;
    expect(captureTimeMs(live, 100, capture - 20)).toBeCloseTo(capture, 6);
  });
});

describe('LatencyTracker', () => {
  it('measures latency and counts skipped frames from code gaps', () => {
    const t = new LatencyTracker(live);
    for (const frame of [0, 1, 2, 5, 6]) t.onFrame(frame, live.epochMs + frame * live.unitMs + 200);
    t.onFrame(6, live.epochMs + 6 * live.unitMs + 230); // repeated frame: ignored
    t.onFrame(null, 0);
    const s = t.snapshot();
    expect(s.framesShown).toBe(5);
    expect(s.framesSkipped).toBe(2);
    expect(s.framesUnreadable).toBe(1);
    expect(s.latencyP50Ms).toBeCloseTo(200, 6);
    expect(s.latencyP95Ms).toBeCloseTo(200, 6);
  });
  it('counts skips for millisecond codes by frame duration', () => {
    const t = new LatencyTracker(webrtc);
    for (const ms of [0, 33, 67, 167, 200]) t.onFrame(ms, webrtc.epochMs + ms + 120);
    expect(t.snapshot().framesSkipped).toBe(2);
  });
  it('reports nothing before a clock is known', () => {
    const t = new LatencyTracker();
    t.onFrame(3, 10);
    expect(t.snapshot()).toMatchObject({ framesShown: 0, framesUnreadable: 1, latencyP95Ms: null });
  });
});

describe('percentile', () => {
  it('uses nearest rank', () => {
    expect(percentile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95)).toBe(10);
    expect(percentile([], 0.5)).toBeNull();
  });
});

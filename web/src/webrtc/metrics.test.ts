import { describe, expect, it } from 'vitest';
import { LatencyTracker } from '../latency/latency';
import { EventLoopLag } from '../metrics/event-loop-lag';
import { latencyWindow, receiverMetrics, senderMetrics } from './metrics';
import { parseInbound } from './stats';
import { TimedLatencyTracker } from './timed-tracker';

describe('receiverMetrics', () => {
  it('derives play time, freeze ratio and startup from the page clocks', () => {
    const sample = parseInbound([{ id: 'v', type: 'inbound-rtp', kind: 'video', framesDecoded: 600, freezeCount: 2, totalFreezesDuration: 1, jitterBufferDelay: 12, jitterBufferEmittedCount: 600 }]);
    const m = receiverMetrics(sample, { state: 'playing', error: null, nowMs: 30_000, offerAtMs: 9_000, firstFrameAtMs: 10_000, receiveBitrateBps: 2e6 }, new LatencyTracker().snapshot(), new EventLoopLag().snapshot());
    expect(m).toMatchObject({ mode: 'webrtc', playSeconds: 20, bufferingRatio: 0.05, stallCount: 2, stallSeconds: 1, startupDelayMs: 1000, jitterBufferDelayMs: 20, receiveBitrateBps: 2e6 });
    expect(m.latencyP50Ms).toBeNull();
    // startup 1 s + freezes 1 s over startup 1 s + play 20 s
    expect(m.bufferingRatioWithStartup).toBeCloseTo(2 / 21, 12);
    expect(m).toMatchObject({ decodedFrames: 600, droppedFrames: 0, eventLoopLagP95Ms: null, eventLoopLagMaxMs: null });
  });
  it('passes the event-loop lag through and counts a call still connecting as all buffering', () => {
    const lag = new EventLoopLag();
    lag.tick(0, 50 + 120);
    const m = receiverMetrics(null, { state: 'connecting', error: null, nowMs: 4_000, offerAtMs: 1_000, firstFrameAtMs: null, receiveBitrateBps: null }, new LatencyTracker().snapshot(), lag.snapshot());
    expect(m).toMatchObject({ bufferingRatio: 0, bufferingRatioWithStartup: 1, droppedFrames: null, decodedFrames: null, eventLoopLagP95Ms: 120, eventLoopLagMaxMs: 120 });
  });
  it('reports zeros, not errors, before anything arrived', () => {
    const m = receiverMetrics(null, { state: 'waiting-offer', error: null, nowMs: 5, offerAtMs: null, firstFrameAtMs: null, receiveBitrateBps: null }, new LatencyTracker().snapshot(), new EventLoopLag().snapshot());
    expect(m).toMatchObject({ playSeconds: 0, bufferingRatio: 0, framesDecoded: 0, startupDelayMs: null, jitterBufferDelayMs: null });
    expect(JSON.parse(JSON.stringify(m))).toEqual(m);
  });
});

describe('senderMetrics', () => {
  it('prefers the RTCP round trip over the candidate pair', () => {
    const m = senderMetrics(null, { state: 'sending', error: null, rendition: '1500k', captureWidth: 854, captureHeight: 480, framesCaptured: 10, maxBitrateBps: 2.5e6, degradationPreference: 'maintain-framerate', sendBitrateBps: null });
    expect(m).toMatchObject({ role: 'sender', rendition: '1500k', targetBitrateBps: null, roundTripTimeMs: null });
  });
});

describe('TimedLatencyTracker and latencyWindow', () => {
  it('keeps each new frame once, with its display time, and windows them', () => {
    const clock = { epochMs: 1000, unitMs: 1, periodCodes: 2 ** 24, codesPerFrame: 1000 / 30 };
    const t = new TimedLatencyTracker(clock);
    t.onFrame(0, 1000 + 50); // 50 ms
    t.onFrame(0, 1000 + 66); // the same frame again: not a new sample
    t.onFrame(33, 1000 + 33 + 60);
    t.onFrame(67, 1000 + 67 + 200);
    expect(t.timed.map((s) => s.latencyMs)).toEqual([50, 60, 200]);
    expect(t.snapshot().framesShown).toBe(3);
    const early = latencyWindow(t.timed, 0, 1100);
    expect(early).toMatchObject({ frames: 2, latencyP50Ms: 50, latencyP95Ms: 60, latencyMaxMs: 60 });
    expect(latencyWindow(t.timed, 1100, 2000)).toMatchObject({ frames: 1, latencyP95Ms: 200 });
    expect(latencyWindow(t.timed, 5000, 6000)).toMatchObject({ frames: 0, latencyP50Ms: null, latencyMeanMs: null });
  });
});

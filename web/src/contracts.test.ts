import { StartupTimeline } from './metrics/startup';
import { describe, expect, it } from 'vitest';
import { CONTRACT_VECTORS, metricFields } from './contracts';
import { LatencyTracker } from './latency/latency';
import { EventLoopLag } from './metrics/event-loop-lag';
import { MetricsSampler } from './metrics/sampler';
import { parseParams } from './params';
import { vodLiveMetrics } from './watch/live';
import { receiverMetrics, senderMetrics } from './webrtc/metrics';

describe('URL parameter vectors (shared/contracts/player.json)', () => {
  for (const vector of CONTRACT_VECTORS) {
    it(`builds ${vector.name} as the harness does`, () => {
      expect(new URLSearchParams(vector.parameters).toString()).toBe(vector.query);
    });
    const parsed = vector.parsed;
    if (vector.page !== 'player' || parsed === undefined) continue;
    it(`parses ${vector.name}`, () => {
      const { params, errors, warnings } = parseParams(vector.query);
      expect(errors).toEqual([]);
      expect(warnings).toEqual([]);
      const picked = Object.fromEntries(Object.keys(parsed).map((key) => [key, (params as unknown as Record<string, unknown>)[key]]));
      expect(picked).toEqual(parsed);
    });
  }
});

describe('metric fields (shared/contracts/player.json)', () => {
  const sorted = (keys: readonly string[]): string[] => [...keys].sort();

  it('the player returns exactly the contract fields', () => {
    const video = {
      addEventListener: () => undefined,
      currentTime: 0,
      buffered: { length: 0, start: () => 0, end: () => 0 },
      ended: false,
      paused: true,
      seeking: false,
      playbackRate: 1,
    } as unknown as HTMLVideoElement;
    const source = { eos: () => false, renditionAt: () => null, segments: () => [], error: () => null, live: () => vodLiveMetrics('abr', 1) };
    expect(sorted(Object.keys(new MetricsSampler(video, new StartupTimeline(), source).metrics()))).toEqual(sorted(metricFields('player')));
  });

  it('the WebRTC pages return exactly the contract fields', () => {
    const clock = { state: 'waiting-offer', error: null, nowMs: 5, offerAtMs: null, firstFrameAtMs: null, receiveBitrateBps: null } as const;
    const receiver = receiverMetrics(null, clock, new LatencyTracker().snapshot(), new EventLoopLag().snapshot());
    expect(sorted(Object.keys(receiver))).toEqual(sorted(metricFields('webrtc_receiver')));
    const sender = senderMetrics(null, { state: 'sending', error: null, rendition: '1500k', captureWidth: 854, captureHeight: 480, framesCaptured: 10, maxBitrateBps: 2.5e6, degradationPreference: 'maintain-framerate', sendBitrateBps: null });
    expect(sorted(Object.keys(sender))).toEqual(sorted(metricFields('webrtc_sender')));
  });
});

import { describe, expect, it } from 'vitest';
import { intervalFigures, WebrtcDashboardModel, WEBRTC_CHARTS, type StatsPoll } from './dashboard-model';
import type { InboundSample } from './stats';

const ORIGIN = 1_700_000_000_000;

function inbound(over: Partial<InboundSample> = {}): InboundSample {
  return {
    framesDecoded: 0,
    framesDropped: 0,
    framesReceived: 0,
    framesPerSecond: 30,
    frameWidth: 854,
    frameHeight: 480,
    freezeCount: 0,
    totalFreezesDurationS: 0,
    jitterBufferDelayS: 0,
    jitterBufferEmittedCount: 0,
    bytesReceived: 0,
    packetsReceived: 0,
    packetsLost: 0,
    nackCount: 0,
    pliCount: 0,
    codec: 'video/VP8',
    roundTripTimeMs: 42,
    ...over,
  };
}

const poll = (tS: number, over: Partial<InboundSample> = {}, sender: StatsPoll['sender'] = null): StatsPoll => ({ tMs: ORIGIN + tS * 1000, inbound: inbound(over), sender });

describe('intervalFigures', () => {
  it('turns cumulative counters into per-interval rates and means', () => {
    const a = poll(1, { bytesReceived: 100_000, jitterBufferDelayS: 1.0, jitterBufferEmittedCount: 30, framesDecoded: 30 });
    const b = poll(1.5, { bytesReceived: 225_000, jitterBufferDelayS: 1.3, jitterBufferEmittedCount: 45, framesDecoded: 45 });
    const f = intervalFigures(a, b);
    expect(f.receivedBps).toBeCloseTo(2_000_000, 6); // 125 kB in 0.5 s
    expect(f.jitterBufferMs).toBeCloseTo(20, 6); // 0.3 s over 15 frames
    expect(f.freezeS).toBeNull();
    expect(f.noNewFrames).toBe(false);
  });
  it('reports new freezes and intervals without a decoded frame; nothing before two polls', () => {
    const a = poll(1, { framesDecoded: 30, freezeCount: 1, totalFreezesDurationS: 0.4 });
    expect(intervalFigures(null, a)).toEqual({ receivedBps: null, jitterBufferMs: null, freezeS: null, noNewFrames: false });
    expect(intervalFigures(a, poll(1.5, { framesDecoded: 30, freezeCount: 1, totalFreezesDurationS: 0.4 })).noNewFrames).toBe(true);
    expect(intervalFigures(a, poll(1.5, { framesDecoded: 40, freezeCount: 2, totalFreezesDurationS: 1.6 })).freezeS).toBeCloseTo(1.2, 9);
    // Before the first frame, an idle interval is not a freeze.
    expect(intervalFigures(poll(0), poll(0.5)).noNewFrames).toBe(false);
  });
});

describe('WebrtcDashboardModel', () => {
  it('fills every series on the shared time axis', () => {
    const m = new WebrtcDashboardModel(ORIGIN);
    const sender = { targetBitrateBps: 2_400_000, availableOutgoingBitrateBps: 3_000_000, sendBitrateBps: 2_300_000, roundTripTimeMs: 45 };
    m.poll(poll(2, { bytesReceived: 0, framesDecoded: 10, jitterBufferEmittedCount: 10, jitterBufferDelayS: 0.2 }, sender));
    m.latency(ORIGIN + 2200, 70);
    m.latency(ORIGIN + 2300, null); // no frame read yet: nothing
    m.poll(poll(2.5, { bytesReceived: 150_000, framesDecoded: 25, jitterBufferEmittedCount: 25, jitterBufferDelayS: 0.5 }, sender));
    const points = m.points();
    expect(Object.keys(points)).toHaveLength(WEBRTC_CHARTS.reduce((n, c) => n + c.series.length, 0));
    for (const [key, n] of Object.entries(points)) expect(n, key).toBeGreaterThan(0);
    expect(m.latestX).toBeCloseTo(2.5, 9);
    const [x, received, send, target, gcc] = m.tables.rate.data();
    expect(x).toEqual([2, 2.5]);
    expect(received?.[1]).toBeCloseTo(2.4, 9); // Mbit/s
    expect([send?.[0], target?.[0], gcc?.[0]]).toEqual([2.3, 2.4, 3]);
    // The first poll has no interval yet: the jitter-buffer mean starts with the second.
    expect(m.tables.latency.data()[0]).toEqual([2.2, 2.5]);
    expect(m.tables.latency.data()[2]?.[1]).toBeCloseTo(20, 9); // 0.3 s over 15 frames
    expect(m.counts).toEqual({ poll: 2, latency: 1 });
  });

  it('shades a freeze while no frame is decoded, then as libwebrtc reports it', () => {
    const m = new WebrtcDashboardModel(ORIGIN);
    m.poll(poll(1, { framesDecoded: 30 }));
    m.poll(poll(1.5, { framesDecoded: 30 })); // frozen: provisional [1, 1.5]
    expect(m.stalls).toEqual([{ start: 1, end: 1.5 }]);
    m.poll(poll(2, { framesDecoded: 30 }));
    expect(m.stalls).toEqual([{ start: 1, end: 2 }]);
    m.poll(poll(2.5, { framesDecoded: 45, freezeCount: 1, totalFreezesDurationS: 1.2 })); // libwebrtc's figure
    expect(m.stalls).toHaveLength(1);
    expect(m.stalls[0]!.start).toBeCloseTo(1.3, 9);
    expect(m.stalls[0]!.end).toBe(2.5);
  });

  it('drops a provisional freeze libwebrtc does not confirm within two polls', () => {
    const m = new WebrtcDashboardModel(ORIGIN);
    m.poll(poll(1, { framesDecoded: 30 }));
    m.poll(poll(1.5, { framesDecoded: 30 }));
    m.poll(poll(2, { framesDecoded: 40 }));
    expect(m.stalls).toHaveLength(1);
    m.poll(poll(2.5, { framesDecoded: 55 }));
    expect(m.stalls).toHaveLength(0);
  });
});

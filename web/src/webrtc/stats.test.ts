import { describe, expect, it } from 'vitest';
import { freezeRatio, jitterBufferDelayMs, parseInbound, parseOutbound, RateWindow, selectedPairRttMs, type StatsEntry } from './stats';

// Shapes as Chromium's getStats() reports them (trimmed).
const receiverReport: StatsEntry[] = [
  { id: 'T01', type: 'transport', selectedCandidatePairId: 'CP1' },
  { id: 'CP0', type: 'candidate-pair', state: 'failed', nominated: false, currentRoundTripTime: 0.5 },
  { id: 'CP1', type: 'candidate-pair', state: 'succeeded', nominated: true, currentRoundTripTime: 0.0432 },
  { id: 'CIT01_96', type: 'codec', mimeType: 'video/VP8', payloadType: 96 },
  { id: 'IA1', type: 'inbound-rtp', kind: 'audio', framesDecoded: 999 },
  {
    id: 'IV1',
    type: 'inbound-rtp',
    kind: 'video',
    codecId: 'CIT01_96',
    framesDecoded: 290,
    framesDropped: 2,
    framesReceived: 293,
    framesPerSecond: 30,
    frameWidth: 854,
    frameHeight: 480,
    freezeCount: 1,
    totalFreezesDuration: 0.4,
    jitterBufferDelay: 14.5,
    jitterBufferEmittedCount: 290,
    bytesReceived: 2_500_000,
    packetsReceived: 2300,
    packetsLost: 3,
    nackCount: 3,
    pliCount: 0,
  },
];

describe('parseInbound', () => {
  it('reads the video inbound-rtp, its codec and the selected pair RTT', () => {
    const s = parseInbound(receiverReport);
    expect(s).toMatchObject({ framesDecoded: 290, framesDropped: 2, frameWidth: 854, frameHeight: 480, freezeCount: 1, totalFreezesDurationS: 0.4, codec: 'video/VP8', packetsLost: 3 });
    expect(s?.roundTripTimeMs).toBeCloseTo(43.2, 6);
    expect(jitterBufferDelayMs(s!)).toBeCloseTo(50, 6);
  });
  it('is null before a video stream exists, and tolerates missing counters', () => {
    expect(parseInbound([{ id: 'x', type: 'inbound-rtp', kind: 'audio' }])).toBeNull();
    const s = parseInbound([{ id: 'v', type: 'inbound-rtp', mediaType: 'video', framesPerSecond: Number.NaN }]);
    expect(s).toMatchObject({ framesDecoded: 0, framesPerSecond: null, codec: null, roundTripTimeMs: null });
    expect(jitterBufferDelayMs(s!)).toBeNull();
  });
});

describe('selectedPairRttMs', () => {
  it('falls back to the nominated succeeded pair without a transport entry', () => {
    expect(selectedPairRttMs(receiverReport.slice(1))).toBeCloseTo(43.2, 6);
    expect(selectedPairRttMs([])).toBeNull();
  });
});

describe('parseOutbound', () => {
  it('reads the encoder side and the receiver reports', () => {
    const s = parseOutbound([
      { id: 'OV1', type: 'outbound-rtp', kind: 'video', targetBitrate: 2_400_000, bytesSent: 1e6, framesEncoded: 300, framesSent: 300, framesPerSecond: 30, frameWidth: 640, frameHeight: 360, qualityLimitationReason: 'bandwidth', qualityLimitationDurations: { none: 3, bandwidth: 7 }, encoderImplementation: 'libvpx' },
      { id: 'RIV1', type: 'remote-inbound-rtp', kind: 'video', localId: 'OV1', roundTripTime: 0.045, fractionLost: 0.01 },
    ]);
    expect(s).toMatchObject({ targetBitrateBps: 2_400_000, frameWidth: 640, qualityLimitationReason: 'bandwidth', encoderImplementation: 'libvpx', remoteFractionLost: 0.01 });
    expect(s?.qualityLimitationDurations).toEqual({ none: 3, bandwidth: 7 });
    expect(s?.remoteRoundTripTimeMs).toBeCloseTo(45, 6);
    expect(s?.availableOutgoingBitrateBps).toBeNull();
  });
  it("reads GCC's estimate from the selected candidate pair", () => {
    const s = parseOutbound([
      { id: 'OV1', type: 'outbound-rtp', kind: 'video', targetBitrate: 1_000_000 },
      { id: 'T01', type: 'transport', selectedCandidatePairId: 'CP1' },
      { id: 'CP0', type: 'candidate-pair', state: 'failed', availableOutgoingBitrate: 5 },
      { id: 'CP1', type: 'candidate-pair', state: 'succeeded', nominated: true, availableOutgoingBitrate: 1_234_567, currentRoundTripTime: 0.05 },
    ]);
    expect(s?.availableOutgoingBitrateBps).toBe(1_234_567);
    expect(s?.roundTripTimeMs).toBeCloseTo(50, 6);
  });
});

describe('RateWindow', () => {
  it('measures the recent rate of a growing counter', () => {
    const w = new RateWindow(2000);
    expect(w.rateBps()).toBeNull();
    w.add(0, 0);
    w.add(1000, 1_000_000); // 8 Mbit/s
    for (let t = 1500; t <= 5000; t += 500) w.add(t, 1_000_000 + ((t - 1000) / 1000) * 125_000); // then 1 Mbit/s
    expect(w.rateBps()).toBeCloseTo(1_000_000, 0);
  });
});

describe('freezeRatio', () => {
  it('is freeze time over play time, 0 before playing', () => {
    expect(freezeRatio(1.5, 30)).toBeCloseTo(0.05, 9);
    expect(freezeRatio(1, 0)).toBe(0);
  });
});

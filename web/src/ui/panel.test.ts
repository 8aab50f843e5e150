import { describe, expect, it } from 'vitest';
import type { Metrics } from '../metrics/types';
import { liveRows } from './panel';

const base = {
  bufferingRatio: 0,
  startupDelayMs: 500,
  stallCount: 0,
  stallSeconds: 0,
  playSeconds: 10,
  meanBitrateKbps: 2500,
  bitrateSwitches: 0,
  segments: [],
  ended: false,
  error: null,
  state: 'playing',
  bufferSeconds: 1,
  currentTime: 100,
  targetLatencyMs: null,
  latencyP50Ms: null,
  latencyP95Ms: null,
  latencyMeanMs: null,
  latencyMaxMs: null,
  latencyLastMs: null,
  mediaLatencyMs: null,
  playoutDelayMs: null,
  framesSkipped: null,
  framesShown: null,
  framesUnreadable: null,
  groupsReceived: null,
  groupsDropped: null,
  fecRecovered: null,
  nacksSent: null,
  fragmentsRetransmitted: null,
  fecGroupsGivenUp: null,
  fecGroupsSuperseded: null,
  liveSeeks: null,
  playbackRate: 1,
} as unknown as Metrics;

describe('MetricsPanel liveRows', () => {
  it('adds no rows in the VOD modes', () => {
    expect(liveRows({ ...base, mode: 'abr' })).toEqual([]);
  });
  it('shows the latencies in live mode', () => {
    const rows = Object.fromEntries(
      liveRows({ ...base, mode: 'live', targetLatencyMs: 1000, latencyLastMs: 1043.4, latencyP50Ms: 1010, latencyP95Ms: 1100, latencyMaxMs: 1500, mediaLatencyMs: 1080, playoutDelayMs: 163.3, framesShown: 300, framesSkipped: 2, framesUnreadable: 0, groupsReceived: 20, groupsDropped: 1, liveSeeks: 0, playbackRate: 1.02 }),
    );
    expect(rows['target latency']).toBe('1000 ms');
    expect(rows['glass-to-glass: last frame']).toBe('1043 ms');
    expect(rows['glass-to-glass: p50 / p95 / max']).toBe('1010 ms / 1100 ms / 1500 ms');
    expect(rows['playhead behind live (mediaLatencyMs)']).toBe('1080 ms');
    expect(rows['playout delay']).toBe('163 ms');
    expect(rows['frames shown / skipped / unreadable']).toBe('300 / 2 / 0');
    expect(rows['playbackRate']).toBe('1.020');
  });
  it('shows the datagram counters only with fec', () => {
    const key = 'datagrams: FEC rebuilt / NACKs / retransmitted / given up / gone';
    expect(Object.fromEntries(liveRows({ ...base, mode: 'live' }))[key]).toBeUndefined();
    const rows = Object.fromEntries(liveRows({ ...base, mode: 'live', fecRecovered: 12, nacksSent: 3, fragmentsRetransmitted: 4, fecGroupsGivenUp: 0, fecGroupsSuperseded: 1 }));
    expect(rows[key]).toBe('12 / 3 / 4 / 0 / 1');
  });
  it('shows a dash before the first frame', () => {
    const rows = Object.fromEntries(liveRows({ ...base, mode: 'live' }));
    expect(rows['glass-to-glass: p50 / p95 / max']).toBe('– / – / –');
  });
});

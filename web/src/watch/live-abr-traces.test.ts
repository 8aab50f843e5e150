import { describe, expect, it } from 'vitest';
import { replayTrace, type AbrTrace } from './live-abr';
import rttflap from './testdata/live-abr-rttflap.json';
import throttle from './testdata/live-abr-throttle.json';
import sixMbps from './testdata/live-abr-6mbps.json';

/**
 * Live ABR on recorded arrival traces: what the player's LiveAbr was told in a real run
 * (`window.pccstream.liveAbrTrace()`, recorded by e2e/tests/live-abr.spec.ts with
 * PCCSTREAM_TRACE_DIR set), with the switches it made then (`decisions`: [toKbps, reason]).
 */
type Recorded = AbrTrace & { decisions: Array<[number, string]> };

const traces: Array<[string, Recorded]> = [
  ['a 20 → 1.2 Mbit/s throttle, 500 ms target', throttle as unknown as Recorded],
  ['video-rttflap at 1.1 × 2.5 Mbit/s, 300 ms target, 2500k cap', rttflap as unknown as Recorded],
  ['live-6mbps-40ms-1bdp, 300 ms target, 2500k cap (the playout-delay player)', sixMbps as unknown as Recorded],
];

describe('LiveAbr on recorded arrival traces (src/watch/testdata)', () => {
  for (const [name, trace] of traces) {
    it(`replays ${name} to the switches made in the run`, () => {
      const replayed = replayTrace(trace).map((d) => [(trace.bitratesBps[d.rendition] as number) / 1000, d.reason]);
      expect(replayed).toEqual(trace.decisions);
    });
  }

  it('steps down after the throttle, below the throttled rate, within 2 s', () => {
    const trace = throttle as unknown as Recorded & { throttleAtMs: number; throttledKbps: number };
    const decisions = replayTrace(trace);
    const kbps = (d: { rendition: number }): number => (trace.bitratesBps[d.rendition] as number) / 1000;
    // above the throttled rate before it
    const before = decisions.filter((d) => d.arrivalMs < trace.throttleAtMs);
    expect(kbps(before[before.length - 1] as { rendition: number })).toBeGreaterThan(trace.throttledKbps);
    const down = decisions.find((d) => d.arrivalMs >= trace.throttleAtMs && kbps(d) < trace.throttledKbps);
    expect(down).toBeDefined();
    expect((down as { arrivalMs: number }).arrivalMs - trace.throttleAtMs).toBeLessThan(2000);
  });

  it('on video-rttflap stays within the 2.5 Mbit/s cap and steps down on every guard', () => {
    const trace = rttflap as unknown as Recorded;
    const decisions = replayTrace(trace);
    for (const d of decisions) {
      expect(trace.allowed).toContain(d.rendition);
      if (['dropped', 'latency', 'buffer'].includes(d.reason)) expect(d.queueDelayMs === null || d.queueDelayMs >= 0).toBe(true);
    }
    expect(Math.max(...trace.allowed.map((i) => trace.bitratesBps[i] as number))).toBe(2_500_000);
  });
});

import { describe, expect, it } from 'vitest';
import {
  ThroughputEstimator,
  bolaIndex,
  bolaParams,
  chooseRendition,
  lowBufferS,
  throughputIndex,
  type AbrInput,
} from './abr';

const LADDER = [300_000, 750_000, 1_500_000, 3_000_000, 6_000_000];

function input(over: Partial<AbrInput>): AbrInput {
  return {
    bitratesBps: LADDER,
    bufferS: 0,
    throughputBps: 10_000_000,
    previous: null,
    bufferTargetS: 10,
    segmentSeconds: 2,
    ...over,
  };
}

describe('throughput rule', () => {
  it('picks the highest rendition under 90 % of the throughput', () => {
    expect(throughputIndex(LADDER, 1_700_000)).toBe(2); // 1.5M ≤ 1.53M
    expect(throughputIndex(LADDER, 1_600_000)).toBe(1); // 1.5M > 1.44M
    expect(throughputIndex(LADDER, 100_000)).toBe(0);
    expect(throughputIndex(LADDER, 1e9)).toBe(4);
  });
});

describe('BOLA', () => {
  const low = lowBufferS(10, 2);
  const params = bolaParams(LADDER, 10, low);

  it('is parameterised', () => {
    expect(low).toBe(3);
    expect(params).not.toBeNull();
    expect(bolaParams([1_000_000], 10, 3)).toBeNull();
    expect(bolaParams(LADDER, 3, 3)).toBeNull();
  });

  it('picks the lowest at low buffer and the highest by the target', () => {
    if (!params) throw new Error('no params');
    expect(bolaIndex(LADDER, 0, params)).toBe(0);
    expect(bolaIndex(LADDER, low, params)).toBe(0);
    expect(bolaIndex(LADDER, 10, params)).toBe(LADDER.length - 1);
  });

  it('never lowers its choice as the buffer grows', () => {
    if (!params) throw new Error('no params');
    let last = 0;
    const seen = new Set<number>();
    for (let b = 0; b <= 12; b += 0.05) {
      const i = bolaIndex(LADDER, b, params);
      expect(i).toBeGreaterThanOrEqual(last);
      last = i;
      seen.add(i);
    }
    expect(seen.size).toBeGreaterThanOrEqual(3); // it actually climbs the ladder in steps
  });
});

describe('chooseRendition', () => {
  it('starts at the lowest rendition without a throughput sample', () => {
    expect(chooseRendition(input({ throughputBps: null, bufferS: 5 }))).toEqual({ index: 0, reason: 'startup' });
  });

  it('has one choice for a single rendition', () => {
    expect(chooseRendition(input({ bitratesBps: [1e6] }))).toEqual({ index: 0, reason: 'single' });
  });

  it('follows throughput while the buffer is low', () => {
    expect(chooseRendition(input({ bufferS: 1, throughputBps: 4_000_000 }))).toEqual({ index: 3, reason: 'throughput' });
    expect(chooseRendition(input({ bufferS: 1, throughputBps: 400_000 }))).toEqual({ index: 0, reason: 'throughput' });
  });

  it('never goes below what the throughput sustains, whatever the buffer', () => {
    for (let bufferS = 0; bufferS <= 12; bufferS += 0.5) {
      expect(chooseRendition(input({ bufferS, throughputBps: 1_700_000, previous: 0 })).index).toBe(2);
      expect(chooseRendition(input({ bufferS, throughputBps: 50e6, previous: 0 })).index).toBe(4);
    }
  });

  it('does not switch up beyond what the throughput sustains', () => {
    const d = chooseRendition(input({ bufferS: 10, throughputBps: 1_000_000, previous: 0 }));
    expect(d).toEqual({ index: 1, reason: 'throughput' });
  });

  it('keeps an unsustainable rendition while the buffer is full, then drops', () => {
    expect(chooseRendition(input({ bufferS: 10, throughputBps: 1_000_000, previous: 4 }))).toEqual({
      index: 4,
      reason: 'bola-hold',
    });
    // As the buffer drains, BOLA lets go step by step, down to the throughput floor.
    let last = 4;
    for (let bufferS = 10; bufferS >= 0; bufferS -= 0.25) {
      const i = chooseRendition(input({ bufferS, throughputBps: 1_000_000, previous: last })).index;
      expect(i).toBeLessThanOrEqual(last);
      expect(i).toBeGreaterThanOrEqual(1);
      last = i;
    }
    expect(last).toBe(1);
    expect(chooseRendition(input({ bufferS: 2, throughputBps: 1_000_000, previous: 4 })).index).toBe(1);
  });

  it('keeps a steady choice on a steady path (no oscillation)', () => {
    // 2 Mbit/s path, buffer hovering around the target.
    const picks = [9.5, 10, 9.8, 10.2, 9.6].map(
      (bufferS) => chooseRendition(input({ bufferS, throughputBps: 2_000_000, previous: 2 })).index,
    );
    expect(new Set(picks).size).toBe(1);
  });
});

describe('ThroughputEstimator', () => {
  it('is null before a sample and a harmonic mean after', () => {
    const e = new ThroughputEstimator(3);
    expect(e.estimate()).toBeNull();
    e.add(1e6);
    expect(e.estimate()).toBe(1e6);
    e.add(4e6);
    expect(e.estimate()).toBeCloseTo(1.6e6);
  });

  it('keeps a sliding window and ignores junk', () => {
    const e = new ThroughputEstimator(2);
    e.add(1e6);
    e.add(2e6);
    e.add(2e6);
    e.add(Number.NaN);
    e.add(0);
    e.add(Infinity);
    expect(e.estimate()).toBe(2e6);
  });
});

import { describe, expect, it } from 'vitest';
import { indexWindow, robustRange } from './range';

describe('robustRange', () => {
  const xs = Array.from({ length: 200 }, (_, i) => i / 10);
  const rate = xs.map(() => 3);
  rate[50] = 400; // one absurd MI
  const capacity = xs.map((_, i) => (i % 10 === 0 ? 12 : null));
  const series = [
    { scale: 'y', anchor: false },
    { scale: 'y', anchor: true },
  ];

  it('clips outliers but keeps anchored series (capacity) inside', () => {
    const [lo, hi] = robustRange([xs, rate, capacity], series, 'y', 0, 20, true);
    expect(lo).toBe(0);
    expect(hi).toBeGreaterThanOrEqual(12);
    expect(hi).toBeLessThan(20);
  });

  it('looks only at the visible window', () => {
    const [, hi] = robustRange([xs, rate, capacity.map(() => null)], series, 'y', 10, 20, false);
    expect(hi).toBeLessThan(4);
  });

  it('has a default range without data', () => {
    expect(robustRange([[], [], []], series, 'y', 0, 1, true)).toEqual([0, 1]);
  });

  it('finds the index window by binary search', () => {
    expect(indexWindow([0, 1, 2, 3, 4], 1.5, 3)).toEqual([2, 4]);
    expect(indexWindow([0, 1, 2], 5, 6)).toEqual([3, 3]);
  });
});

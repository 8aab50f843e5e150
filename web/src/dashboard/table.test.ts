import { describe, expect, it } from 'vitest';
import { SeriesTable } from './table';

describe('SeriesTable', () => {
  it('aligns rows of different series on one x column, nulls elsewhere', () => {
    const t = new SeriesTable(3, 100);
    t.add(0.1, [1, null]);
    t.add(0.2, [null, 2, 3]);
    t.add(0.3, [undefined, NaN, Infinity]);
    expect(t.data()).toEqual([
      [0.1, 0.2, 0.3],
      [1, null, null],
      [null, 2, null],
      [null, 3, null],
    ]);
    expect([t.points(0), t.points(1), t.points(2)]).toEqual([1, 1, 1]);
  });

  it('inserts a late row in x order', () => {
    const t = new SeriesTable(1, 100);
    [1, 2, 4].forEach((x) => t.add(x, [x]));
    t.add(3, [3]);
    t.add(0.5, [0.5]);
    expect(t.x).toEqual([0.5, 1, 2, 3, 4]);
    expect(t.columns[0]).toEqual([0.5, 1, 2, 3, 4]);
  });

  it('stays bounded: decimates the older half, keeps recent rows whole', () => {
    const t = new SeriesTable(1, 1000);
    for (let i = 0; i < 100_000; i++) t.add(i, [i]);
    expect(t.length).toBeLessThanOrEqual(1000);
    expect(t.length).toBeGreaterThan(500);
    expect(t.x.at(-1)).toBe(99_999);
    // The newest quarter is at full resolution.
    const tail = t.x.slice(-250);
    for (let i = 1; i < tail.length; i++) expect((tail[i] as number) - (tail[i - 1] as number)).toBe(1);
    // Sorted, and the columns moved with x.
    for (let i = 1; i < t.length; i++) expect(t.x[i]).toBeGreaterThan(t.x[i - 1] as number);
    expect(t.columns[0]).toEqual(t.x);
    expect(t.decimated).toBe(100_000 - t.length);
  });

  it('ignores a non-finite x', () => {
    const t = new SeriesTable(1);
    t.add(NaN, [1]);
    expect(t.length).toBe(0);
  });
});

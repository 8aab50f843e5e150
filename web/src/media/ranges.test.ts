import { describe, expect, it } from 'vitest';
import { bufferAhead, evictionRange } from './ranges';

const ranges = [
  { start: 0, end: 4 },
  { start: 6, end: 10 },
];

describe('bufferAhead', () => {
  it('measures to the end of the containing range', () => {
    expect(bufferAhead(ranges, 1)).toBe(3);
    expect(bufferAhead(ranges, 7.5)).toBe(2.5);
    expect(bufferAhead(ranges, 4)).toBe(0);
  });
  it('is 0 in a gap, outside, or with nothing buffered', () => {
    expect(bufferAhead(ranges, 5)).toBe(0);
    expect(bufferAhead(ranges, 11)).toBe(0);
    expect(bufferAhead([], 0)).toBe(0);
  });
  it('tolerates a playhead a hair before the first frame', () => {
    expect(bufferAhead([{ start: 0.0005, end: 2 }], 0)).toBeCloseTo(1.9995);
  });
});

describe('evictionRange', () => {
  it('removes played media beyond the keep window', () => {
    expect(evictionRange([{ start: 0, end: 30 }], 25, 10)).toEqual({ start: 0, end: 15 });
  });
  it('does nothing for small amounts or an empty buffer', () => {
    expect(evictionRange([{ start: 0, end: 30 }], 10.5, 10)).toBeNull();
    expect(evictionRange([], 100, 10)).toBeNull();
  });
});

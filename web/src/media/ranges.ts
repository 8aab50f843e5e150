/** Pure helpers over buffered time ranges (seconds). */

export interface Range {
  start: number;
  end: number;
}

export function toRanges(ranges: TimeRanges): Range[] {
  const out: Range[] = [];
  for (let i = 0; i < ranges.length; i++) out.push({ start: ranges.start(i), end: ranges.end(i) });
  return out;
}

/** Tolerance for "inside a range" (timestamps are rounded to the media timescale). */
const EDGE_S = 1e-3;

/**
 * Buffered media ahead of `t`: the end of the range containing `t`, minus `t`; 0 when `t`
 * is in no range. Only the contiguous range counts — a gap stops playback.
 */
export function bufferAhead(ranges: readonly Range[], t: number): number {
  for (const r of ranges) {
    if (t >= r.start - EDGE_S && t <= r.end + EDGE_S) return Math.max(0, r.end - Math.max(t, r.start));
  }
  return 0;
}

/**
 * The range to remove so no more than `keepBehindS` of played media stays behind `t`:
 * [first start, t − keepBehindS], or null when less than `minRemoveS` would go.
 */
export function evictionRange(
  ranges: readonly Range[],
  t: number,
  keepBehindS: number,
  minRemoveS = 1,
): Range | null {
  const first = ranges[0];
  if (first === undefined) return null;
  const end = t - keepBehindS;
  if (end - first.start < minRemoveS) return null;
  return { start: first.start, end };
}

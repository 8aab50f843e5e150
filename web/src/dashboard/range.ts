/** Index window [i0, i1) of sorted `xs` within [min, max]. */
export function indexWindow(xs: number[], min: number, max: number): [number, number] {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] as number) < min) lo = mid + 1;
    else hi = mid;
  }
  let end = lo;
  while (end < xs.length && (xs[end] as number) <= max) end++;
  return [lo, end];
}

/** y range from the 1st-99th percentile of visible values, anchors' maxima included. */
export function robustRange(
  data: readonly (readonly (number | null)[])[],
  series: readonly { scale: string; anchor: boolean }[],
  scale: string,
  xMin: number,
  xMax: number,
  zero: boolean,
): [number, number] {
  const xs = data[0] as number[];
  const [i0, i1] = indexWindow(xs, xMin, xMax);
  const values: number[] = [];
  let anchorMax = -Infinity;
  series.forEach((s, k) => {
    if (s.scale !== scale) return;
    const col = data[k + 1] ?? [];
    for (let j = i0; j < i1; j++) {
      const v = col[j];
      if (v == null) continue;
      values.push(v);
      if (s.anchor && v > anchorMax) anchorMax = v;
    }
  });
  if (values.length === 0) return zero ? [0, 1] : [-1, 1];
  values.sort((a, b) => a - b);
  const q = (p: number): number => values[Math.min(values.length - 1, Math.max(0, Math.round(p * (values.length - 1))))] as number;
  let lo = q(0.01);
  let hi = Math.max(q(0.99), anchorMax);
  const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.1 || 1;
  lo -= pad;
  hi += pad;
  if (zero) lo = 0;
  return [lo, hi];
}

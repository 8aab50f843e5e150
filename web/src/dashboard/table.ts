/**
 * One chart's data in the shape uPlot draws: a shared x column (seconds) and one column per
 * series, `null` where a row carries no value of that series (records of different kinds
 * arrive at different times; uPlot bridges the gaps with `spanGaps`).
 *
 * Bounded: past `capacity` rows the older half is decimated (every other row dropped), so a
 * long session keeps full resolution for recent data and a thinning history, never more
 * than `capacity` rows.
 */
export class SeriesTable {
  readonly x: number[] = [];
  readonly columns: (number | null)[][];
  /** Bumped on every change: the chart redraws only when it moved. */
  version = 0;
  /** Rows removed by decimation so far. */
  decimated = 0;

  constructor(
    readonly seriesCount: number,
    readonly capacity = 6000,
  ) {
    if (!Number.isInteger(capacity) || capacity < 4) throw new RangeError('capacity must be an integer >= 4');
    this.columns = Array.from({ length: seriesCount }, () => []);
  }

  get length(): number {
    return this.x.length;
  }

  /**
   * Add a row at `x` with `values[i]` for series i (undefined/null: no value). Rows stay
   * sorted by x; out-of-order rows (a late record) are inserted in place.
   */
  add(x: number, values: readonly (number | null | undefined)[]): void {
    if (!Number.isFinite(x)) return;
    let at = this.x.length;
    while (at > 0 && (this.x[at - 1] as number) > x) at--;
    if (at === this.x.length) {
      this.x.push(x);
      for (let i = 0; i < this.seriesCount; i++) (this.columns[i] as (number | null)[]).push(clean(values[i]));
    } else {
      this.x.splice(at, 0, x);
      for (let i = 0; i < this.seriesCount; i++) (this.columns[i] as (number | null)[]).splice(at, 0, clean(values[i]));
    }
    if (this.x.length > this.capacity) this.decimate();
    this.version++;
  }

  /** Drop every other row of the older half. */
  private decimate(): void {
    const half = Math.floor(this.x.length / 2);
    const keep = (arr: unknown[]): void => {
      let w = 0;
      for (let r = 0; r < half; r += 2) arr[w++] = arr[r];
      const removed = half - w;
      arr.splice(w, removed);
    };
    const before = this.x.length;
    keep(this.x);
    for (const column of this.columns) keep(column);
    this.decimated += before - this.x.length;
  }

  /** Non-null values of series i. */
  points(i: number): number {
    let n = 0;
    for (const v of this.columns[i] ?? []) if (v !== null) n++;
    return n;
  }

  /** uPlot's AlignedData (the arrays themselves, not copies). */
  data(): [number[], ...(number | null)[][]] {
    return [this.x, ...this.columns];
  }

  clear(): void {
    this.x.length = 0;
    for (const c of this.columns) c.length = 0;
    this.version++;
  }
}

function clean(v: number | null | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

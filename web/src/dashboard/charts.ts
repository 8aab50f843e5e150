import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ChartSpec, Interval, SeriesSpec } from './model';
import { robustRange } from './range';
import type { SeriesTable } from './table';

/** Redraw period: 90 ms, so timer slack still leaves ≥ 10 redraws a second. */
export const RENDER_INTERVAL_MS = 90;
export const WINDOW_CHOICES_S = [30, 60, 300, 0] as const; // 0: everything

const CHART_HEIGHT = 170;
const COMPACT_HEIGHT = 120;
const SYNC_KEY = 'pccstream';

interface Chart {
  spec: ChartSpec;
  plot: uPlot;
  drawnVersion: number;
  drawnRange: string;
}

/**
 * What the charts draw: DashboardModel (the player's telemetry), or the WebRTC arm's model
 * (web/src/webrtc/dashboard-model.ts). One table per chart, by chart id.
 */
export interface ChartModel {
  readonly charts: readonly ChartSpec[];
  readonly tables: Readonly<Record<string, SeriesTable>>;
  /** Shaded in every chart (stalls, freezes), x in seconds. */
  readonly stalls: readonly Interval[];
  /** Names of a categorical axis' values. */
  readonly stateNames: readonly string[];
  /** The newest x (s): the live view follows it. */
  readonly latestX: number;
  readonly hello?: Record<string, unknown> | null;
}

export interface DashboardOptions {
  /** Follow the newest data (live) or show everything (replay). */
  live: boolean;
  /** Seconds of history in the live view (0: all). */
  windowS?: number;
  /** Called when the user presses the download button. */
  onDownload?: () => void;
  title?: string;
  /** Smaller charts (the compare view). */
  compact?: boolean;
  /** A user zoom (range) or return to live (null), e.g. to mirror it in another view. */
  onUserRange?: (range: { min: number; max: number } | null) => void;
  /** The bar's info text (default: the session's controller). */
  describe?: () => string;
}

function stepped(): uPlot.Series.PathBuilder {
  const factory = uPlot.paths.stepped;
  if (!factory) throw new Error('uPlot has no stepped path builder');
  return factory({ align: 1 });
}

function seriesOptions(s: SeriesSpec): uPlot.Series {
  const base: uPlot.Series = {
    label: s.label,
    stroke: s.color,
    width: 1.5,
    scale: s.scale ?? 'y',
    spanGaps: true,
    points: { show: false },
  };
  if (s.dash) base.dash = s.dash;
  if (s.kind === 'points') {
    base.paths = () => null;
    base.points = { show: true, size: 4, stroke: s.color, fill: s.color, width: 0 };
  } else if (s.kind === 'step') {
    base.paths = stepped();
  }
  return base;
}

/**
 * The charts: one uPlot per ChartSpec, cursors synchronised, x zoom shared (drag to zoom any
 * chart, double-click to return to live), stalls shaded in every chart, redrawn at 10 Hz
 * only when the data or the window moved, and not at all while hidden or paused.
 */
export class Dashboard {
  readonly charts: Chart[] = [];
  paused = false;
  visible = true;
  windowS: number;
  renders = 0;
  /** Main-thread time spent redrawing, ms (total and the longest redraw). */
  renderMs = 0;
  renderMsMax = 0;
  private userRange: { min: number; max: number } | null = null;
  private applying = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly pauseButton: HTMLButtonElement;
  private readonly grid: HTMLElement;
  private readonly info: HTMLElement;

  constructor(
    private readonly root: HTMLElement,
    private readonly model: ChartModel,
    private readonly options: DashboardOptions,
  ) {
    this.windowS = options.windowS ?? (options.live ? 60 : 0);
    root.classList.add('dashboard');
    const bar = document.createElement('div');
    bar.className = 'dashboard-bar';
    const title = document.createElement('strong');
    title.textContent = options.title ?? 'Congestion control dashboard';
    this.pauseButton = button(options.live ? 'Pause' : 'Reset zoom', () => (options.live ? this.togglePause() : this.resume()));
    this.pauseButton.dataset['role'] = 'pause';
    const live = button('Live', () => this.resume());
    live.hidden = !options.live;
    const select = document.createElement('select');
    select.setAttribute('aria-label', 'time window');
    for (const s of WINDOW_CHOICES_S) {
      const o = document.createElement('option');
      o.value = String(s);
      o.textContent = s === 0 ? 'whole session' : `last ${s} s`;
      o.selected = s === this.windowS;
      select.appendChild(o);
    }
    select.addEventListener('change', () => {
      this.windowS = Number(select.value);
      this.userRange = null;
      this.render(true);
    });
    bar.append(title, this.pauseButton, live, select);
    if (options.onDownload) {
      const dl = button('Download recording (JSON Lines)', options.onDownload);
      dl.dataset['role'] = 'download';
      bar.appendChild(dl);
    }
    this.info = document.createElement('span');
    this.info.className = 'dashboard-info';
    bar.appendChild(this.info);
    this.grid = document.createElement('div');
    this.grid.className = 'dashboard-grid';
    root.replaceChildren(bar, this.grid);
    for (const spec of model.charts) this.charts.push(this.makeChart(spec));
    new ResizeObserver(() => this.resize()).observe(this.grid);
  }

  private get height(): number {
    return this.options.compact ? COMPACT_HEIGHT : CHART_HEIGHT;
  }

  private chartWidth(): number {
    const width = this.grid.clientWidth || this.root.clientWidth || 600;
    return Math.max(300, width - 8);
  }

  private makeChart(spec: ChartSpec): Chart {
    const holder = document.createElement('figure');
    holder.className = 'dashboard-chart';
    holder.dataset['chart'] = spec.id;
    this.grid.appendChild(holder);
    const model = this.model;
    const axes: uPlot.Axis[] = [
      { label: 'time (s)', labelSize: 18, size: 36 },
      { label: spec.yLabel, labelSize: 18, size: 60, scale: 'y' },
    ];
    const scales: uPlot.Scales = { x: { time: false } };
    if (spec.zero && !spec.robust) scales['y'] = { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] };
    if (spec.robust) {
      const meta = spec.series.map((s) => ({ scale: s.scale ?? 'y', anchor: s.anchor ?? false }));
      const range = (scale: string, zero: boolean): uPlot.Range.Function => (u) =>
        robustRange(u.data as (number | null)[][], meta, scale, u.scales['x']?.min ?? -Infinity, u.scales['x']?.max ?? Infinity, zero);
      scales['y'] = { range: range('y', spec.zero ?? false) };
      if (spec.y2Label) scales['y2'] = { range: range('y2', false) };
    }
    if (spec.categorical) {
      scales['y'] = { range: () => [-0.5, Math.max(1, model.stateNames.length) - 0.5] };
      const y = axes[1] as uPlot.Axis;
      y.size = 90;
      y.splits = () => model.stateNames.map((_, i) => i);
      y.values = (_u, splits) => splits.map((v) => model.stateNames[v] ?? '');
    }
    if (spec.y2Label) {
      axes.push({ label: spec.y2Label, labelSize: 18, size: 60, scale: 'y2', side: 1, grid: { show: false } });
      scales['y2'] ??= { auto: true };
    }
    const opts: uPlot.Options = {
      title: spec.title,
      width: this.chartWidth(),
      height: this.height,
      scales,
      axes,
      series: [{ label: 't (s)', value: (_u, v) => (v == null ? '–' : v.toFixed(2)) }, ...spec.series.map(seriesOptions)],
      cursor: { sync: { key: SYNC_KEY, setSeries: false }, drag: { x: true, y: false, setScale: true } },
      legend: { live: true },
      hooks: {
        drawClear: [(u) => this.shadeStalls(u)],
        setScale: [(u, key) => this.onSetScale(u, key)],
      },
    };
    const plot = new uPlot(opts, this.table(spec).data(), holder);
    holder.addEventListener('dblclick', () => this.resume());
    return { spec, plot, drawnVersion: -1, drawnRange: '' };
  }

  private table(spec: ChartSpec): SeriesTable {
    const table = this.model.tables[spec.id];
    if (table === undefined) throw new Error(`the dashboard model has no table for chart ${spec.id}`);
    return table;
  }

  private shadeStalls(u: uPlot): void {
    const stalls = this.model.stalls;
    if (stalls.length === 0) return;
    const { left, top, width, height } = u.bbox;
    const min = u.scales['x']?.min ?? -Infinity;
    const max = u.scales['x']?.max ?? Infinity;
    const ctx = u.ctx;
    ctx.save();
    ctx.fillStyle = 'rgba(214, 39, 40, 0.15)';
    for (const s of stalls) {
      if (s.end < min || s.start > max) continue;
      const x0 = Math.max(left, u.valToPos(s.start, 'x', true));
      const x1 = Math.min(left + width, u.valToPos(Math.max(s.end, s.start + 0.05), 'x', true));
      if (x1 > x0) ctx.fillRect(x0, top, x1 - x0, height);
    }
    ctx.restore();
  }

  private onSetScale(u: uPlot, key: string): void {
    if (key !== 'x' || this.applying) return;
    const min = u.scales['x']?.min;
    const max = u.scales['x']?.max;
    if (min == null || max == null) return;
    // A user zoom (drag): freeze the range in every chart.
    this.userRange = { min, max };
    this.options.onUserRange?.({ min, max });
    this.applying = true;
    try {
      for (const c of this.charts) if (c.plot !== u) c.plot.batch(() => c.plot.setScale('x', { min, max }));
    } finally {
      this.applying = false;
    }
    this.updateInfo();
  }

  start(): void {
    if (this.timer === null) this.timer = setInterval(() => this.render(), RENDER_INTERVAL_MS);
    this.render(true);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  togglePause(): void {
    this.paused = !this.paused;
    this.pauseButton.textContent = this.paused ? 'Resume' : 'Pause';
    this.render(true);
  }

  /** Back to following the newest data (or the whole recording). */
  resume(): void {
    this.userRange = null;
    if (this.paused) this.togglePause();
    this.render(true);
    this.options.onUserRange?.(null);
  }

  /** Apply a range chosen elsewhere (null: live), without reporting it back. */
  applyRange(range: { min: number; max: number } | null): void {
    this.userRange = range;
    this.render(true);
  }

  setVisible(visible: boolean): void {
    this.visible = visible;
    this.root.hidden = !visible;
    if (visible) {
      this.resize();
      this.render(true);
    }
  }

  private resize(): void {
    if (!this.visible) return;
    const width = this.chartWidth();
    for (const c of this.charts) if (c.plot.width !== width) c.plot.setSize({ width, height: this.height });
  }

  private range(): { min: number; max: number } {
    if (this.userRange) return this.userRange;
    const latest = Math.max(this.model.latestX, 1);
    if (this.windowS > 0) return { min: Math.max(0, latest - this.windowS), max: latest };
    return { min: 0, max: latest };
  }

  /** Redraw the charts whose data or range changed (all with `force`). */
  render(force = false): void {
    if (!this.visible || (this.paused && !force)) return;
    const started = performance.now();
    const { min, max } = this.range();
    const key = `${min.toFixed(3)}:${max.toFixed(3)}:${this.model.stalls.length}`;
    this.applying = true;
    try {
      for (const c of this.charts) {
        const table = this.table(c.spec);
        if (!force && c.drawnVersion === table.version && c.drawnRange === key) continue;
        const dataChanged = c.drawnVersion !== table.version || force;
        // batch: one synchronous redraw, and the setScale hook fires while `applying`.
        c.plot.batch(() => {
          if (dataChanged) c.plot.setData(table.data());
          c.plot.setScale('x', { min, max });
        });
        c.drawnVersion = table.version;
        c.drawnRange = key;
      }
    } finally {
      this.applying = false;
    }
    this.renders++;
    this.updateInfo();
    const spent = performance.now() - started;
    this.renderMs += spent;
    if (spent > this.renderMsMax) this.renderMsMax = spent;
  }

  private updateInfo(): void {
    const cc = this.model.hello?.['cc'];
    const parts = [this.options.describe ? this.options.describe() : typeof cc === 'string' ? `cc=${cc}` : 'no session yet'];
    if (this.paused) parts.push('paused');
    if (this.userRange) parts.push('zoomed (double-click: live)');
    this.info.textContent = parts.join(' · ');
  }
}

function button(text: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  b.addEventListener('click', onClick);
  return b;
}

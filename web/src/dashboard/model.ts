import type { TelemetryRecord } from '../protocol/telemetry';
import { SeriesTable } from './table';

/**
 * The dashboard's data model: telemetry records (`hello`, `sample`, `mi`, `link`) and the
 * page's own `player` records in, one SeriesTable per chart out. Pure (no DOM), so the live
 * page and a replayed recording go through exactly the same code and draw the same points.
 *
 * Time axis: seconds since `originMs` (epoch ms). A record's epoch time is
 * `hello.t0_us / 1000 + t_ms`; `originMs` defaults to the session's `t0`, so x = t_ms / 1000.
 * The compare view passes one origin to both sessions so their axes line up.
 */

export type SeriesKind = 'line' | 'step' | 'points';

export interface SeriesSpec {
  label: string;
  color: string;
  kind?: SeriesKind;
  /** Scale name: 'y' (left axis, default) or 'y2' (right axis). */
  scale?: 'y' | 'y2';
  dash?: number[];
  /** With a robust range: this series' maximum is always inside the chart. */
  anchor?: boolean;
}

export interface ChartSpec {
  id: string;
  title: string;
  yLabel: string;
  y2Label?: string;
  series: SeriesSpec[];
  /** y values are indices into the model's state names. */
  categorical?: boolean;
  /** y ranges from the 1st to 99th percentile of the visible values (outliers clipped). */
  robust?: boolean;
  /** The left axis starts at 0. */
  zero?: boolean;
}

export const CHARTS = [
  {
    id: 'rate',
    title: 'Sending rate vs delivered throughput vs capacity',
    yLabel: 'rate (Mbit/s)',
    robust: true,
    zero: true,
    series: [
      { label: 'link capacity', color: '#111', kind: 'step', dash: [6, 3], anchor: true },
      { label: 'pacing rate', color: '#1f77b4' },
      { label: 'delivery rate', color: '#2ca02c' },
      { label: 'MI target rate', color: '#9467bd', kind: 'step' },
      { label: 'MI send rate', color: '#ff7f0e' },
      { label: 'MI delivered', color: '#17becf' },
      { label: 'video bitrate', color: '#d62728', kind: 'step', anchor: true },
    ],
  },
  {
    id: 'rtt',
    title: 'RTT and RTT gradient',
    yLabel: 'RTT (ms)',
    y2Label: 'RTT gradient (s/s)',
    robust: true,
    zero: true,
    series: [
      { label: 'srtt', color: '#1f77b4' },
      { label: 'min RTT', color: '#2ca02c' },
      { label: 'latest RTT', color: '#aec7e8' },
      { label: 'MI RTT', color: '#9467bd' },
      { label: 'base RTT (link)', color: '#111', kind: 'step', dash: [6, 3], anchor: true },
      { label: 'gradient raw', color: '#ff9896', scale: 'y2' },
      { label: 'gradient filtered', color: '#d62728', scale: 'y2' },
    ],
  },
  {
    id: 'utility',
    title: 'Utility per monitor interval (probe pairs: ▲ higher rate, ▼ lower rate)',
    yLabel: 'utility (controller units)',
    robust: true,
    series: [
      { label: 'utility', color: '#7f7f7f', kind: 'points' },
      { label: 'probe ▲ (higher rate)', color: '#2ca02c', kind: 'points' },
      { label: 'probe ▼ (lower rate)', color: '#d62728', kind: 'points' },
    ],
  },
  {
    id: 'loss',
    title: 'Loss',
    yLabel: 'loss (%)',
    zero: true,
    series: [
      { label: 'MI loss', color: '#d62728', kind: 'step' },
      { label: 'loss per sample', color: '#ff7f0e', kind: 'step' },
    ],
  },
  {
    id: 'state',
    title: 'Controller state',
    yLabel: 'state',
    categorical: true,
    series: [
      { label: 'state now (10 Hz)', color: '#9467bd', kind: 'step' },
      { label: 'MI judged in', color: '#ff7f0e', kind: 'points' },
    ],
  },
  {
    id: 'window',
    title: 'Congestion window, bytes in flight, link queue',
    yLabel: 'bytes (kB)',
    y2Label: 'pacing rate (Mbit/s)',
    series: [
      { label: 'cwnd', color: '#1f77b4' },
      { label: 'bytes in flight', color: '#ff7f0e' },
      { label: 'link queue', color: '#111', kind: 'step', dash: [6, 3] },
      { label: 'pacing rate', color: '#2ca02c', scale: 'y2', dash: [2, 2] },
    ],
  },
  {
    id: 'player',
    title: 'Player: buffer level and bitrate (stalls shaded in every chart)',
    yLabel: 'buffer (s)',
    y2Label: 'bitrate (kbit/s)',
    series: [
      { label: 'buffer level', color: '#1f77b4' },
      { label: 'playing bitrate', color: '#d62728', kind: 'step', scale: 'y2' },
      // Live ABR's decisions (to the rendition switched to), by reason (src/watch/live-abr.ts).
      { label: 'ABR switch: throughput', color: '#2ca02c', kind: 'points', scale: 'y2' },
      { label: 'ABR switch: latency, loss or buffer', color: '#ff7f0e', kind: 'points', scale: 'y2' },
    ],
  },
] as const satisfies readonly ChartSpec[];

/**
 * Live mode only (`mode=live`, or a recording whose player records carry latencies): drawn
 * after the RTT chart, where the WebRTC arm's latency chart sits in the compare view.
 */
export const LATENCY_CHART = {
  id: 'latency',
  title: 'Latency: glass-to-glass (last frame shown), playhead behind live, target',
  yLabel: 'latency (ms)',
  robust: true,
  zero: true,
  series: [
    { label: 'glass-to-glass', color: '#d62728' },
    { label: 'playhead behind live', color: '#1f77b4' },
    { label: 'target latency', color: '#111', kind: 'step', dash: [6, 3], anchor: true },
  ],
} as const satisfies ChartSpec;

/**
 * Sprout and Sprout-EWMA sessions (`sprout` records, one per 20 ms tick): drawn instead of
 * PCC's utility and state charts. Rates the model counts in packets go on the right axis:
 * the server does not send its datagram size, so they are not converted to bits.
 */
export const SPROUT_CHARTS = [
  {
    id: 'sprout-rate',
    title: 'Sprout: the rate its window allows vs arrivals, the model\'s rate and its cautious forecast',
    yLabel: 'rate (Mbit/s)',
    y2Label: 'rate (packets/s)',
    robust: true,
    zero: true,
    series: [
      { label: 'allowed rate (window / (target + min RTT))', color: '#1f77b4', kind: 'step' },
      { label: 'arrivals (pkt/s)', color: '#2ca02c', scale: 'y2' },
      { label: 'model mean rate (pkt/s)', color: '#9467bd', scale: 'y2' },
      { label: 'cautious forecast rate (pkt/s)', color: '#d62728', scale: 'y2', dash: [4, 2] },
    ],
  },
  {
    id: 'sprout-forecast',
    title: 'Sprout forecast: cautious (5th percentile) cumulative deliveries, arrivals and the queue estimate',
    yLabel: 'packets',
    robust: true,
    zero: true,
    series: [
      { label: 'forecast within 1 tick', color: '#aec7e8' },
      { label: 'forecast within 4 ticks', color: '#1f77b4' },
      { label: 'forecast within the horizon', color: '#17becf' },
      { label: 'arrivals in the tick', color: '#2ca02c', kind: 'step' },
      { label: 'queue estimate', color: '#d62728' },
    ],
  },
] as const satisfies readonly ChartSpec[];

/** RemyCC sessions (`remy` records, at most every 20 ms): its memory and the rule that fired. */
export const REMY_CHARTS = [
  {
    id: 'remy-memory',
    title: 'RemyCC memory: send / receive EWMAs, queueing delay, RTT ratio',
    yLabel: 'ms',
    y2Label: 'RTT ratio',
    robust: true,
    zero: true,
    series: [
      { label: 'send EWMA', color: '#1f77b4' },
      { label: 'receive EWMA', color: '#2ca02c' },
      { label: 'slow receive EWMA', color: '#98df8a' },
      { label: 'queueing delay', color: '#ff7f0e' },
      { label: 'RTT ratio', color: '#d62728', scale: 'y2' },
    ],
  },
  {
    id: 'remy-rule',
    title: 'RemyCC: the rule that fired (leaf index) and its intersend time',
    yLabel: 'rule (leaf index)',
    y2Label: 'intersend (ms)',
    series: [
      { label: 'rule index', color: '#7f7f7f', kind: 'points' },
      { label: 'intersend', color: '#ff7f0e', kind: 'step', scale: 'y2' },
    ],
  },
  {
    id: 'remy-window',
    title: 'RemyCC action on the window: new window = multiple × window + increment',
    yLabel: 'increment (packets)',
    y2Label: 'multiple (×)',
    series: [
      { label: 'window increment', color: '#2ca02c', kind: 'step' },
      { label: 'window multiple', color: '#1f77b4', kind: 'step', scale: 'y2' },
    ],
  },
] as const satisfies readonly ChartSpec[];

export type ChartId =
  | (typeof CHARTS)[number]['id']
  | typeof LATENCY_CHART.id
  | (typeof SPROUT_CHARTS)[number]['id']
  | (typeof REMY_CHARTS)[number]['id'];

/** Which controller-specific charts and rows a session gets. */
export type ControllerFamily = 'pcc' | 'sprout' | 'remy';

/** The family of a `hello.cc` name: Sprout's two variants, Remy, or PCC's charts (the rest). */
export function controllerFamily(cc: unknown): ControllerFamily {
  if (typeof cc !== 'string') return 'pcc';
  const name = cc.split(':')[0] ?? '';
  if (name === 'sprout' || name.startsWith('sprout-')) return 'sprout';
  if (name === 'remy') return 'remy';
  return 'pcc';
}

// PCC's own charts, replaced by the family's for Sprout and Remy sessions.
const PCC_ONLY: readonly string[] = ['utility', 'state'];
/** Forecast entries drawn: within 1 and 4 ticks, and the last (the horizon). */
const FORECAST_TICKS = [1, 4] as const;

// Points (canvas arcs) cost far more to draw than lines: only utility and the MI state are
// drawn as points; the other MI series are lines through the MI values.

/** A page-side sample of the player, on the session clock (see docs/dashboard.md). */
export interface PlayerRecord {
  type: 'player';
  t_ms: number;
  buffer_s: number;
  bitrate_kbps: number | null;
  state: string;
  current_time: number;
  dropped_frames: number | null;
  total_frames: number | null;
  /** Live mode only: glass-to-glass latency of the last frame shown, the playhead's lag behind the live edge, the target (ms). */
  latency_ms?: number | null;
  media_latency_ms?: number | null;
  target_latency_ms?: number | null;
  /** Live ABR switched (since the last sample): to this ladder bitrate, for this reason. */
  abr_switch_kbps?: number;
  abr_switch_reason?: string;
  [field: string]: unknown;
}

export interface Interval {
  start: number;
  end: number;
}

const MAX_STALLS = 2000;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const mbps = (v: unknown): number | null => {
  const n = num(v);
  return n === null ? null : n / 1e6;
};

interface PendingProbe {
  x: number;
  rate: number;
  utility: number | null;
}

export class DashboardModel {
  readonly tables: Record<ChartId, SeriesTable>;
  readonly stateNames: string[] = [];
  readonly stalls: Interval[] = [];
  hello: TelemetryRecord | null = null;
  /** Records taken in (by type). */
  readonly counts: Record<string, number> = {};
  private t0Ms: number | null = null;
  private lastSample: { sent: number; lost: number } | null = null;
  private pendingProbe: PendingProbe | null = null;
  private stallOpen: Interval | null = null;
  private latencyShown = false;
  private familyNow: ControllerFamily = 'pcc';
  private lastSprout: Record<string, unknown> | null = null;
  private lastRemy: Record<string, unknown> | null = null;
  /** Sprout's tick (s): 20 ms unless the session set `cc.tick_ms`. */
  private sproutTickS = 0.02;
  latestX = 0;

  constructor(
    private originMs: number | null = null,
    capacity = 6000,
  ) {
    const tables = {} as Record<ChartId, SeriesTable>;
    for (const chart of [...CHARTS, LATENCY_CHART, ...SPROUT_CHARTS, ...REMY_CHARTS]) {
      tables[chart.id] = new SeriesTable(chart.series.length, capacity);
    }
    this.tables = tables;
  }

  /**
   * The charts drawn: CHARTS (for Sprout and Remy sessions their own charts after the
   * window chart instead of PCC's utility and state), plus the latency chart after RTT once
   * latency is on.
   */
  get charts(): readonly ChartSpec[] {
    let charts: readonly ChartSpec[] = CHARTS;
    if (this.familyNow !== 'pcc') {
      const own = this.familyNow === 'sprout' ? SPROUT_CHARTS : REMY_CHARTS;
      const common = CHARTS.filter((c) => !PCC_ONLY.includes(c.id));
      const at = common.findIndex((c) => c.id === 'window') + 1;
      charts = [...common.slice(0, at), ...own, ...common.slice(at)];
    }
    if (!this.latencyShown) return charts;
    return [...charts.slice(0, 2), LATENCY_CHART, ...charts.slice(2)];
  }

  /** The session's controller family (from `hello.cc`, or the first Sprout/Remy record). */
  get family(): ControllerFamily {
    return this.familyNow;
  }

  /** Changes whenever `charts` does: a mounted view must be rebuilt. */
  get chartsKey(): string {
    return `${this.familyNow}:${this.latencyShown ? 'latency' : ''}`;
  }

  /** Draw the latency chart (live mode; call before the view is mounted). */
  enableLatency(): void {
    this.latencyShown = true;
  }

  get latencyEnabled(): boolean {
    return this.latencyShown;
  }

  get origin(): number | null {
    return this.originMs ?? this.t0Ms;
  }

  /** Session t0 (epoch ms) from `hello`, or null before it. */
  get t0(): number | null {
    return this.t0Ms;
  }

  /** x (s) of a record's `t_ms`; null before `hello`. */
  x(tMs: number): number | null {
    if (this.t0Ms === null) return null;
    const origin = this.originMs ?? this.t0Ms;
    return (this.t0Ms + tMs - origin) / 1000;
  }

  ingest(record: TelemetryRecord | PlayerRecord): void {
    this.counts[record.type] = (this.counts[record.type] ?? 0) + 1;
    if (record.type === 'hello') {
      if (this.hello === null) {
        this.hello = record as TelemetryRecord;
        this.familyNow = controllerFamily(record['cc']);
        const params = record['cc_params'];
        const tickMs = typeof params === 'object' && params !== null ? Number((params as Record<string, unknown>)['tick_ms']) : NaN;
        if (Number.isFinite(tickMs) && tickMs > 0) this.sproutTickS = tickMs / 1000;
        const t0Us = num(record['t0_us']);
        this.t0Ms = t0Us === null ? 0 : t0Us / 1000;
      }
      return;
    }
    const tMs = num(record['t_ms']);
    if (tMs === null) return;
    const x = this.x(tMs);
    if (x === null) return;
    if (x > this.latestX) this.latestX = x;
    switch (record.type) {
      case 'sample':
        this.sample(x, record);
        break;
      case 'mi':
        this.mi(x, record);
        break;
      case 'link':
        this.link(x, record);
        break;
      case 'sprout':
        this.familyNow = 'sprout';
        this.sprout(x, record);
        break;
      case 'remy':
        this.familyNow = 'remy';
        this.remy(x, record);
        break;
      case 'player':
        this.player(x, record as PlayerRecord);
        break;
      default:
        break; // unknown record types are kept in the recording, not drawn
    }
  }

  private sample(x: number, r: Record<string, unknown>): void {
    const pacing = mbps(r['pacing_rate_bps']);
    this.tables.rate.add(x, [null, pacing, mbps(r['delivery_rate_bps'])]);
    this.tables.rtt.add(x, [num(r['srtt_ms']), num(r['min_rtt_ms']), num(r['latest_rtt_ms'])]);
    const kb = (v: unknown): number | null => {
      const n = num(v);
      return n === null ? null : n / 1000;
    };
    this.tables.window.add(x, [kb(r['cwnd_bytes']), kb(r['bytes_in_flight']), null, pacing]);
    if (typeof r['state'] === 'string') this.tables.state.add(x, [this.stateIndex(r['state'])]);
    const sent = num(r['bytes_sent']);
    const lost = num(r['bytes_lost']);
    if (sent !== null && lost !== null) {
      const prev = this.lastSample;
      this.lastSample = { sent, lost };
      if (prev !== null && sent > prev.sent) {
        const loss = (100 * Math.max(0, lost - prev.lost)) / (sent - prev.sent);
        this.tables.loss.add(x, [null, loss]);
      } else if (prev !== null) {
        this.tables.loss.add(x, [null, 0]);
      }
    }
  }

  private stateIndex(state: string): number {
    let i = this.stateNames.indexOf(state);
    if (i < 0) {
      this.stateNames.push(state);
      i = this.stateNames.length - 1;
    }
    return i;
  }

  private mi(x: number, r: Record<string, unknown>): void {
    this.tables.rate.add(x, [null, null, null, mbps(r['target_rate_bps']), mbps(r['send_rate_bps']), mbps(r['delivery_rate_bps'])]);
    const rtt = num(r['rtt_ms']);
    this.tables.rtt.add(x, [null, null, null, rtt !== null && rtt > 0 ? rtt : null, null, num(r['rtt_gradient_raw']), num(r['rtt_gradient'])]);
    const loss = num(r['loss']);
    this.tables.loss.add(x, [loss === null ? null : loss * 100, null]);
    const state = typeof r['state'] === 'string' ? r['state'] : 'unknown';
    this.tables.state.add(x, [null, this.stateIndex(state)]);
    this.utility(x, state, num(r['target_rate_bps']), num(r['utility']));
  }

  /** Probing MIs come in pairs (rate ×(1+ε), ×(1−ε)): the pair's higher rate is ▲. */
  private utility(x: number, state: string, rate: number | null, utility: number | null): void {
    const probing = state === 'probing' || state === 'decision';
    const pending = this.pendingProbe;
    if (probing && rate !== null) {
      if (pending === null) {
        this.pendingProbe = { x, rate, utility };
        return;
      }
      this.pendingProbe = null;
      const firstHigher = pending.rate >= rate;
      this.tables.utility.add(pending.x, [null, firstHigher ? pending.utility : null, firstHigher ? null : pending.utility]);
      this.tables.utility.add(x, [null, firstHigher ? null : utility, firstHigher ? utility : null]);
      return;
    }
    if (pending !== null) {
      this.pendingProbe = null;
      this.tables.utility.add(pending.x, [pending.utility]);
    }
    this.tables.utility.add(x, [utility]);
  }

  private link(x: number, r: Record<string, unknown>): void {
    this.tables.rate.add(x, [mbps(r['capacity_bps'])]);
    this.tables.rtt.add(x, [null, null, null, null, num(r['base_rtt_ms'])]);
    const q = num(r['queue_bytes']);
    this.tables.window.add(x, [null, null, q === null ? null : q / 1000]);
  }

  private sprout(x: number, r: Record<string, unknown>): void {
    this.lastSprout = r;
    const forecast = Array.isArray(r['forecast_packets']) ? (r['forecast_packets'] as unknown[]).map(num) : [];
    const last = forecast.length > 0 ? (forecast[forecast.length - 1] ?? null) : null;
    // The forecast's rate: its last cumulative count over its horizon.
    const tickS = this.sproutTickS;
    const cautiousPps = last !== null && forecast.length > 0 ? last / (forecast.length * tickS) : null;
    const arrived = num(r['arrived_packets']);
    this.tables['sprout-rate'].add(x, [mbps(r['allowed_rate_bps']), arrived === null ? null : arrived / tickS, num(r['rate_mean_pps']), cautiousPps]);
    const within = FORECAST_TICKS.map((n) => (forecast.length >= n ? (forecast[n - 1] ?? null) : null));
    this.tables['sprout-forecast'].add(x, [...within, last, num(r['arrived_packets']), num(r['queue_estimate_packets'])]);
  }

  private remy(x: number, r: Record<string, unknown>): void {
    this.lastRemy = r;
    this.tables['remy-memory'].add(x, [num(r['rec_send_ewma']), num(r['rec_rec_ewma']), num(r['slow_rec_rec_ewma']), num(r['queueing_delay']), num(r['rtt_ratio'])]);
    this.tables['remy-rule'].add(x, [num(r['rule']), num(r['intersend_ms'])]);
    this.tables['remy-window'].add(x, [num(r['window_increment']), num(r['window_multiple'])]);
  }

  /** Rows for the metrics table: the latest Sprout forecast or Remy rule (none for PCC). */
  controllerRows(): [string, string][] {
    const f = (v: unknown, digits = 1): string => {
      const n = num(v);
      return n === null ? '–' : n.toFixed(digits);
    };
    const s = this.lastSprout;
    if (this.familyNow === 'sprout' && s !== null) {
      const forecast = Array.isArray(s['forecast_packets']) ? (s['forecast_packets'] as unknown[]).map((v) => f(v, 0)).join(', ') : null;
      const busy = s['busy'] === true ? ' (queue busy)' : s['busy'] === false ? ' (sender-limited)' : '';
      const rows: [string, string][] = [
        ['Sprout: model mean rate', `${f(s['rate_mean_pps'], 0)} packets/s`],
        ['Sprout: window allowed', `${f(num(s['window_bytes']) === null ? null : (num(s['window_bytes']) as number) / 1000)} kB = ${f(mbps(s['allowed_rate_bps']), 2)} Mbit/s`],
        ['Sprout: queue estimate', `${f(s['queue_estimate_packets'], 0)} packets`],
        ['Sprout: arrivals in the last tick', `${f(s['arrived_packets'])} packets${busy}`],
      ];
      if (forecast !== null) rows.splice(1, 0, ['Sprout: cautious forecast (cumulative packets per tick)', forecast]);
      return rows;
    }
    const r = this.lastRemy;
    if (this.familyNow === 'remy' && r !== null) {
      const inc = num(r['window_increment']);
      return [
        ['Remy: rule fired', `#${f(r['rule'], 0)}`],
        ['Remy: action', `window × ${f(r['window_multiple'], 3)} ${inc !== null && inc < 0 ? '−' : '+'} ${inc === null ? '–' : Math.abs(inc)} packets, intersend ${f(r['intersend_ms'], 2)} ms`],
        ['Remy: window', `${f(r['window_packets'], 0)} packets`],
        ['Remy: send / receive EWMA', `${f(r['rec_send_ewma'], 2)} / ${f(r['rec_rec_ewma'], 2)} ms (slow: ${f(r['slow_rec_rec_ewma'], 2)} ms)`],
        ['Remy: RTT ratio', f(r['rtt_ratio'], 3)],
      ];
    }
    return [];
  }

  private player(x: number, r: PlayerRecord): void {
    if (r.latency_ms !== undefined || r.media_latency_ms !== undefined) {
      this.latencyShown = true; // a live recording replayed
      this.tables.latency.add(x, [num(r.latency_ms), num(r.media_latency_ms), num(r.target_latency_ms)]);
    }
    const kbps = num(r.bitrate_kbps);
    const to = num(r.abr_switch_kbps);
    if (to !== null) {
      const guard = r.abr_switch_reason !== 'throughput' && r.abr_switch_reason !== 'startup';
      this.tables.player.add(x, [num(r.buffer_s), kbps, guard ? null : to, guard ? to : null]);
    } else {
      this.tables.player.add(x, [num(r.buffer_s), kbps]);
    }
    if (kbps !== null) this.tables.rate.add(x, [null, null, null, null, null, null, kbps / 1000]);
    const stalled = r.state === 'stalled';
    if (stalled) {
      if (this.stallOpen === null) {
        this.stallOpen = { start: x, end: x };
        this.stalls.push(this.stallOpen);
        if (this.stalls.length > MAX_STALLS) this.stalls.shift();
      } else {
        this.stallOpen.end = x;
      }
    } else if (this.stallOpen !== null) {
      this.stallOpen.end = x;
      this.stallOpen = null;
    }
  }

  /** Non-null points per series, keyed `chart/series label`. */
  points(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const chart of this.charts) {
      const table = this.tables[chart.id as ChartId];
      chart.series.forEach((s, i) => (out[`${chart.id}/${s.label}`] = table.points(i)));
    }
    return out;
  }
}

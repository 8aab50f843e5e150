/**
 * The WebRTC arm's dashboard data (pure, no DOM): the receiver's getStats polls, the embedded
 * sender's figures and the glass-to-glass latency in, one SeriesTable per chart out, drawn by
 * the player dashboard's chart code (web/src/dashboard/charts.ts).
 *
 * Time axis: seconds since `originMs` (epoch ms; the compare view gives both of its sides the
 * same origin, so this arm's charts line up with the WebTransport arm's).
 *
 * Freezes are shaded like stalls. libwebrtc counts a freeze when it ends (the next frame
 * rendered), so a poll whose `freezeCount` grew shades [poll − Δ totalFreezesDuration, poll];
 * while no frame is decoded between two polls the span is shaded provisionally, replaced by
 * libwebrtc's figure when it comes (dropped if libwebrtc reports none within two polls).
 */

import type { ChartSpec, Interval } from '../dashboard/model';
import { SeriesTable } from '../dashboard/table';
import type { InboundSample } from './stats';

export const WEBRTC_CHARTS = [
  {
    id: 'rate',
    title: "WebRTC: received bitrate vs the sender's target (GCC)",
    yLabel: 'rate (Mbit/s)',
    robust: true,
    zero: true,
    series: [
      { label: 'received bitrate', color: '#2ca02c' },
      { label: 'send rate', color: '#ff7f0e' },
      { label: 'target bitrate (encoder)', color: '#9467bd', kind: 'step', anchor: true },
      { label: 'GCC estimate (available outgoing)', color: '#1f77b4', kind: 'step', dash: [6, 3] },
    ],
  },
  {
    id: 'rtt',
    title: 'RTT',
    yLabel: 'RTT (ms)',
    robust: true,
    zero: true,
    series: [
      { label: 'candidate-pair RTT', color: '#1f77b4' },
      { label: 'RTCP RTT (sender)', color: '#9467bd' },
    ],
  },
  {
    id: 'latency',
    title: 'Latency: glass-to-glass (last frame shown), jitter-buffer delay',
    yLabel: 'latency (ms)',
    robust: true,
    zero: true,
    series: [
      { label: 'glass-to-glass', color: '#d62728' },
      { label: 'jitter-buffer delay', color: '#2ca02c' },
    ],
  },
  {
    id: 'video',
    title: 'Received video: frame rate and height (freezes shaded in every chart)',
    yLabel: 'frames/s',
    y2Label: 'height (px)',
    zero: true,
    series: [
      { label: 'frames/s', color: '#1f77b4' },
      { label: 'frame height', color: '#d62728', kind: 'step', scale: 'y2' },
    ],
  },
] as const satisfies readonly ChartSpec[];

export type WebrtcChartId = (typeof WEBRTC_CHARTS)[number]['id'];

/** The sender's figures the charts use (its `metrics()`, read from the embedded sender page). */
export interface SenderFigures {
  targetBitrateBps: number | null;
  availableOutgoingBitrateBps: number | null;
  sendBitrateBps: number | null;
  roundTripTimeMs: number | null;
}

/** One getStats poll of the receiver (wall clock, ms), with the sender's figures if known. */
export interface StatsPoll {
  tMs: number;
  inbound: InboundSample | null;
  sender: SenderFigures | null;
}

/** What one poll adds over the previous one. */
export interface IntervalFigures {
  /** Bytes received over the interval, as bit/s. */
  receivedBps: number | null;
  /** Mean jitter-buffer delay of the frames that left it during the interval, ms. */
  jitterBufferMs: number | null;
  /** Freeze time libwebrtc reported during the interval (null: no new freeze). */
  freezeS: number | null;
  /** No frame decoded during the interval (after the first one). */
  noNewFrames: boolean;
}

export function intervalFigures(prev: StatsPoll | null, cur: StatsPoll): IntervalFigures {
  const a = prev?.inbound ?? null;
  const b = cur.inbound;
  const none: IntervalFigures = { receivedBps: null, jitterBufferMs: null, freezeS: null, noNewFrames: false };
  if (prev === null || a === null || b === null) return none;
  const dt = cur.tMs - prev.tMs;
  const bytes = b.bytesReceived - a.bytesReceived;
  const emitted = b.jitterBufferEmittedCount - a.jitterBufferEmittedCount;
  return {
    receivedBps: dt > 0 && bytes >= 0 ? (bytes * 8 * 1000) / dt : null,
    jitterBufferMs: emitted > 0 ? ((b.jitterBufferDelayS - a.jitterBufferDelayS) / emitted) * 1000 : null,
    freezeS: b.freezeCount > a.freezeCount ? Math.max(0, b.totalFreezesDurationS - a.totalFreezesDurationS) : null,
    noNewFrames: a.framesDecoded > 0 && b.framesDecoded === a.framesDecoded,
  };
}

const MAX_STALLS = 2000;
const mbps = (v: number | null | undefined): number | null => (v == null ? null : v / 1e6);

export class WebrtcDashboardModel {
  readonly charts: readonly ChartSpec[] = WEBRTC_CHARTS;
  readonly tables: Record<WebrtcChartId, SeriesTable>;
  readonly stalls: Interval[] = [];
  readonly stateNames: string[] = [];
  readonly hello = null;
  readonly counts = { poll: 0, latency: 0 };
  latestX = 0;
  private prev: StatsPoll | null = null;
  private provisional: Interval | null = null;
  private resumedPolls = 0;

  constructor(
    readonly originMs: number,
    capacity = 6000,
  ) {
    const tables = {} as Record<WebrtcChartId, SeriesTable>;
    for (const chart of WEBRTC_CHARTS) tables[chart.id] = new SeriesTable(chart.series.length, capacity);
    this.tables = tables;
  }

  x(tMs: number): number {
    return (tMs - this.originMs) / 1000;
  }

  private at(tMs: number): number {
    const x = this.x(tMs);
    if (x > this.latestX) this.latestX = x;
    return x;
  }

  /** One getStats poll of the receiver (and the sender's figures at that time). */
  poll(p: StatsPoll): void {
    this.counts.poll += 1;
    const x = this.at(p.tMs);
    const prevX = this.prev === null ? x : this.x(this.prev.tMs);
    const f = intervalFigures(this.prev, p);
    const s = p.sender;
    this.tables.rate.add(x, [mbps(f.receivedBps), mbps(s?.sendBitrateBps), mbps(s?.targetBitrateBps), mbps(s?.availableOutgoingBitrateBps)]);
    this.tables.rtt.add(x, [p.inbound?.roundTripTimeMs ?? null, s?.roundTripTimeMs ?? null]);
    if (f.jitterBufferMs !== null) this.tables.latency.add(x, [null, f.jitterBufferMs]);
    if (p.inbound !== null) this.tables.video.add(x, [p.inbound.framesPerSecond, p.inbound.frameHeight]);
    this.freezes(x, prevX, f);
    this.prev = p;
  }

  /** Glass-to-glass latency of the last frame shown, sampled at the dashboard's rate. */
  latency(tMs: number, latencyMs: number | null): void {
    if (latencyMs === null) return;
    this.counts.latency += 1;
    this.tables.latency.add(this.at(tMs), [latencyMs]);
  }

  private freezes(x: number, prevX: number, f: IntervalFigures): void {
    if (f.freezeS !== null) {
      this.dropProvisional();
      this.addStall({ start: x - f.freezeS, end: x });
    } else if (f.noNewFrames) {
      this.resumedPolls = 0;
      if (this.provisional !== null) this.provisional.end = x;
      else {
        this.provisional = { start: prevX, end: x };
        this.addStall(this.provisional);
      }
    } else if (this.provisional !== null && ++this.resumedPolls >= 2) {
      this.dropProvisional(); // frames again and no freeze reported: not one by libwebrtc's rule
    }
  }

  private addStall(interval: Interval): void {
    this.stalls.push(interval);
    if (this.stalls.length > MAX_STALLS) this.stalls.shift();
  }

  private dropProvisional(): void {
    if (this.provisional === null) return;
    const i = this.stalls.lastIndexOf(this.provisional);
    if (i >= 0) this.stalls.splice(i, 1);
    this.provisional = null;
    this.resumedPolls = 0;
  }

  /** Non-null points per series, keyed `chart/series label` (as DashboardModel.points). */
  points(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const chart of WEBRTC_CHARTS) {
      const table = this.tables[chart.id];
      chart.series.forEach((s, i) => (out[`${chart.id}/${s.label}`] = table.points(i)));
    }
    return out;
  }
}

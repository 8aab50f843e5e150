import type { Metrics } from '../metrics/types';

export interface PanelExtras {
  session: string | null;
  cc: string | null;
  throughputKbps: number | null;
  decision: string | null;
  telemetryRecords: number;
  /** The controller's own rows (Sprout's forecast, Remy's rule), after 'congestion control'. */
  controllerRows?: [string, string][];
}

const fmt = (x: number, digits = 2): string => (Number.isFinite(x) ? x.toFixed(digits) : '–');
const ms = (x: number | null): string => (x === null ? '–' : `${fmt(x, 0)} ms`);
const count = (x: number | null): string => (x === null ? '–' : String(x));

/** mode=live: the latency rows (definitions in web/README.md, "Live"); none in the VOD modes. */
export function liveRows(m: Metrics): [string, string][] {
  if (m.mode !== 'live') return [];
  return [
    ['target latency', ms(m.targetLatencyMs)],
    ['glass-to-glass: last frame', ms(m.latencyLastMs)],
    ['glass-to-glass: p50 / p95 / max', [m.latencyP50Ms, m.latencyP95Ms, m.latencyMaxMs].map(ms).join(' / ')],
    ['playhead behind live (mediaLatencyMs)', ms(m.mediaLatencyMs)],
    ['playout delay', ms(m.playoutDelayMs)],
    ['frames shown / skipped / unreadable', [m.framesShown, m.framesSkipped, m.framesUnreadable].map(count).join(' / ')],
    ['freezes (WebRTC rule)', count(m.freezeCount)],
    ['groups received / dropped', `${count(m.groupsReceived)} / ${count(m.groupsDropped)}`],
    ...(m.fecRecovered === null
      ? []
      : ([['datagrams: FEC rebuilt / NACKs / retransmitted / given up / gone', [m.fecRecovered, m.nacksSent, m.fragmentsRetransmitted, m.fecGroupsGivenUp, m.fecGroupsSuperseded].map(count).join(' / ')]] as [string, string][])),
    ['live seeks', count(m.liveSeeks)],
    ['playbackRate', fmt(m.playbackRate, 3)],
  ];
}

/** Plain-text metrics panel: a <table> of name/value rows, rebuilt at ~4 Hz. */
export class MetricsPanel {
  constructor(private readonly table: HTMLTableElement) {}

  render(m: Metrics, extras: PanelExtras): void {
    const last = m.segments[m.segments.length - 1];
    const rows: [string, string][] = [
      ['state', m.state],
      ['currentTime', `${fmt(m.currentTime)} s`],
      ['bufferSeconds', `${fmt(m.bufferSeconds)} s`],
      ['startupDelayMs', m.startupDelayMs === null ? '–' : fmt(m.startupDelayMs, 0)],
      ['bufferingRatio', fmt(m.bufferingRatio, 4)],
      ['bufferingRatioWithStartup', fmt(m.bufferingRatioWithStartup, 4)],
      ['stallCount', String(m.stallCount)],
      ['stallSeconds', fmt(m.stallSeconds, 3)],
      ['playSeconds', fmt(m.playSeconds, 3)],
      ...liveRows(m),
      ['meanBitrateKbps', fmt(m.meanBitrateKbps, 0)],
      ['bitrateSwitches', String(m.bitrateSwitches)],
      ['frames dropped / decoded', `${count(m.droppedFrames)} / ${count(m.decodedFrames)}`],
      ['event loop lag p95 / max', `${ms(m.eventLoopLagP95Ms)} / ${ms(m.eventLoopLagMaxMs)}`],
      ['segments', String(m.segments.length)],
      [
        'last segment',
        last
          ? `#${last.index} ${last.renditionId}: ${last.bytes} B in ${fmt(last.downloadMs, 0)} ms ` +
            `(${fmt(last.throughputKbps, 0)} kbit/s, TTFB ${fmt(last.ttfbMs, 0)} ms)`
          : '–',
      ],
      ['throughput estimate', extras.throughputKbps === null ? '–' : `${fmt(extras.throughputKbps, 0)} kbit/s`],
      ['ABR decision', extras.decision ?? '–'],
      ['congestion control', extras.cc ?? '–'],
      ...(extras.controllerRows ?? []),
      ['telemetry records', String(extras.telemetryRecords)],
      ['session', extras.session ?? '–'],
      ['ended', String(m.ended)],
      ['error', m.error ?? '–'],
    ];
    const body = document.createElement('tbody');
    for (const [name, value] of rows) {
      const tr = body.insertRow();
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = name;
      tr.appendChild(th);
      tr.insertCell().textContent = value;
    }
    this.table.replaceChildren(body);
  }
}

import type { Metrics } from '../metrics/types';

export interface PanelExtras {
  session: string | null;
  cc: string | null;
  throughputKbps: number | null;
  decision: string | null;
  telemetryRecords: number;
}

const fmt = (x: number, digits = 2): string => (Number.isFinite(x) ? x.toFixed(digits) : '–');

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
      ['stallCount', String(m.stallCount)],
      ['stallSeconds', fmt(m.stallSeconds, 3)],
      ['playSeconds', fmt(m.playSeconds, 3)],
      ['meanBitrateKbps', fmt(m.meanBitrateKbps, 0)],
      ['bitrateSwitches', String(m.bitrateSwitches)],
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

import type { TelemetryRecord } from '../protocol/telemetry';
import { RingBuffer } from '../transport/ring';
import type { PlayerRecord } from './model';

/** JSON Lines recording: a header line, then every record in arrival order. */
export const RECORDING_FORMAT = 'pccstream-recording';
export const RECORDING_VERSION = 1;
/** Records kept for download (telemetry + player): ≥ 14 min of a PCC session (~47 records/s). */
export const RECORDING_CAPACITY = 40_000;

export interface RecordingHeader {
  type: 'recording';
  format: typeof RECORDING_FORMAT;
  version: number;
  created: string;
  page: string;
  player_version: string;
  /** Records pushed out of the bounded recording before this download. */
  dropped: number;
  [field: string]: unknown;
}

export type AnyRecord = TelemetryRecord | PlayerRecord;

/** Every record the dashboard drew, bounded; `hello` is kept even after the ring wraps. */
export class Recording {
  private readonly ring: RingBuffer<AnyRecord>;
  hello: TelemetryRecord | null = null;

  constructor(capacity = RECORDING_CAPACITY) {
    this.ring = new RingBuffer(capacity);
  }

  add(record: AnyRecord): void {
    if (record.type === 'hello') {
      if (this.hello === null) this.hello = record as TelemetryRecord;
      return;
    }
    this.ring.push(record);
  }

  get length(): number {
    return this.ring.length + (this.hello ? 1 : 0);
  }

  records(): AnyRecord[] {
    const rest = this.ring.toArray();
    return this.hello ? [this.hello, ...rest] : rest;
  }

  toJsonLines(meta: { page: string; playerVersion: string; extra?: Record<string, unknown> }): string {
    const header: RecordingHeader = {
      type: 'recording',
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      created: new Date().toISOString(),
      page: meta.page,
      player_version: meta.playerVersion,
      dropped: this.ring.dropped,
      ...meta.extra,
    };
    const lines = [JSON.stringify(header)];
    for (const r of this.records()) lines.push(JSON.stringify(r));
    return lines.join('\n') + '\n';
  }
}

export interface ParsedRecording {
  header: RecordingHeader | null;
  records: AnyRecord[];
  /** Lines that were not JSON objects with a string `type` (1-based line numbers). */
  badLines: number[];
}

/** Parse a JSON Lines recording (ours, or any file of telemetry records one per line). */
export function parseRecording(text: string): ParsedRecording {
  const records: AnyRecord[] = [];
  const badLines: number[] = [];
  let header: RecordingHeader | null = null;
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '') return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      badLines.push(i + 1);
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
      badLines.push(i + 1);
      return;
    }
    const record = value as AnyRecord;
    if (record.type === 'recording') {
      header ??= record as unknown as RecordingHeader;
      return;
    }
    records.push(record);
  });
  return { header, records, badLines };
}

/**
 * Maps the page clock to the session clock of `hello` (t_ms since `t0_us`). Page and server
 * share a wall clock in the loopback demo, so `t_ms = now_epoch − t0`; when the two clearly
 * disagree (the hello seems to arrive > 5 s late or > 1 s early), the hello's arrival is
 * taken as t_ms ≈ 0 instead. `skewMs` reports what was seen.
 */
export class SessionClock {
  readonly offsetMs: number;
  readonly skewMs: number;

  constructor(t0Us: number, helloArrivalEpochMs: number) {
    const t0Ms = t0Us / 1000;
    this.skewMs = helloArrivalEpochMs - t0Ms;
    this.offsetMs = this.skewMs > 5000 || this.skewMs < -1000 ? helloArrivalEpochMs : t0Ms;
  }

  tMs(epochMs: number): number {
    return epochMs - this.offsetMs;
  }
}

export function pageEpochMs(): number {
  return performance.timeOrigin + performance.now();
}

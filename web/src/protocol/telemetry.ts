import { MAX_TELEMETRY_FRAME } from './constants';
import { ProtocolError } from './errors';

/** One telemetry record: a JSON object with a `type` (hello, sample, mi, link, ...). */
export interface TelemetryRecord {
  type: string;
  [field: string]: unknown;
}

const LENGTH_BYTES = 4;

/**
 * Incremental decoder for a TELEMETRY stream's frames (`u32 length` + UTF-8 JSON), fed the
 * bytes after the stream-type byte in chunks of any size, split anywhere.
 */
export class TelemetryDecoder {
  private buffer: Uint8Array = new Uint8Array(0);
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });

  /** Append `chunk` and return every record completed by it, in order. */
  push(chunk: Uint8Array): TelemetryRecord[] {
    this.buffer = concat(this.buffer, chunk);
    const records: TelemetryRecord[] = [];
    let offset = 0;
    while (this.buffer.length - offset >= LENGTH_BYTES) {
      const view = new DataView(this.buffer.buffer, this.buffer.byteOffset + offset, LENGTH_BYTES);
      const length = view.getUint32(0);
      if (length > MAX_TELEMETRY_FRAME) {
        throw new ProtocolError(
          `telemetry frame of ${length} bytes is over ${MAX_TELEMETRY_FRAME}`,
        );
      }
      const end = offset + LENGTH_BYTES + length;
      if (this.buffer.length < end) break;
      records.push(parseRecord(this.utf8.decode(this.buffer.subarray(offset + LENGTH_BYTES, end))));
      offset = end;
    }
    if (offset > 0) this.buffer = this.buffer.slice(offset);
    return records;
  }

  /** Bytes of an incomplete frame still waiting for the rest. */
  get pendingBytes(): number {
    return this.buffer.length;
  }
}

function parseRecord(text: string): TelemetryRecord {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProtocolError('telemetry frame is not a JSON object');
  }
  const record = value as Record<string, unknown>;
  if (typeof record['type'] !== 'string') {
    throw new ProtocolError('telemetry record has no string "type"');
  }
  return record as TelemetryRecord;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

import { TelemetryDecoder, UniStreamType, type TelemetryRecord } from '../protocol';
import { RingBuffer } from './ring';
import { nextChunk } from './read';

export const TELEMETRY_CAPACITY = 20_000;

/**
 * Telemetry records from the server's TELEMETRY unidirectional streams, bounded (the last
 * TELEMETRY_CAPACITY records). The `hello` record is also kept apart, so it survives the ring.
 */
export class TelemetryLog {
  private readonly ring: RingBuffer<TelemetryRecord>;
  hello: TelemetryRecord | null = null;
  readonly warnings: string[] = [];

  constructor(capacity = TELEMETRY_CAPACITY) {
    this.ring = new RingBuffer(capacity);
  }

  add(record: TelemetryRecord): void {
    if (record.type === 'hello' && this.hello === null) {
      this.hello = record;
      return;
    }
    this.ring.push(record);
  }

  get dropped(): number {
    return this.ring.dropped;
  }

  get length(): number {
    return this.ring.length;
  }

  /**
   * Plain-object copies, oldest first; the `hello` record (if any) comes first even after
   * the ring has wrapped.
   */
  records(): TelemetryRecord[] {
    const all = this.hello ? [this.hello, ...this.ring.toArray()] : this.ring.toArray();
    return structuredClone(all);
  }

  /** Read one server → client unidirectional stream to its end. */
  async readUniStream(stream: ReadableStream<Uint8Array>): Promise<void> {
    const reader = stream.getReader();
    try {
      const first = await nextChunk(reader);
      if (first === null) return;
      const type = first[0];
      if (type !== UniStreamType.TELEMETRY) {
        this.warnings.push(`ignored a unidirectional stream of unknown type ${String(type)}`);
        await reader.cancel().catch(() => undefined);
        return;
      }
      const decoder = new TelemetryDecoder();
      for (let chunk: Uint8Array | null = first.subarray(1); chunk !== null; chunk = await nextChunk(reader)) {
        for (const record of decoder.push(chunk)) this.add(record);
      }
    } finally {
      reader.releaseLock();
    }
  }
}

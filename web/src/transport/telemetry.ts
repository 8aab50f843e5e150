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

  /** Called with every record as it is added (the dashboard draws from here). */
  onRecord: ((record: TelemetryRecord) => void) | null = null;

  add(record: TelemetryRecord): void {
    this.onRecord?.(record);
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
      const decoder = new TelemetryDecoder();
      if (type === UniStreamType.TELEMETRY) {
        for (let chunk: Uint8Array | null = first.subarray(1); chunk !== null; chunk = await nextChunk(reader)) {
          for (const record of decoder.push(chunk)) this.add(record);
        }
      } else if (type === UniStreamType.TELEMETRY_DEFLATE) {
        await this.readDeflated(first.subarray(1), reader, decoder);
      } else {
        this.warnings.push(`ignored a unidirectional stream of unknown type ${String(type)}`);
        await reader.cancel().catch(() => undefined);
        return;
      }
    } finally {
      reader.releaseLock();
    }
  }

  /**
   * TELEMETRY_DEFLATE: raw deflate, sync-flushed by the server, inflated as it arrives. The
   * server never ends the deflate stream (it stops when the session does), so an "unexpected
   * end" after the input ended is the normal end, not an error.
   */
  private async readDeflated(
    rest: Uint8Array,
    reader: ReadableStreamDefaultReader<Uint8Array>,
    decoder: TelemetryDecoder,
  ): Promise<void> {
    const inflate = new DecompressionStream('deflate-raw');
    const writer = inflate.writable.getWriter();
    let inputEnded = false;
    const pump = (async (): Promise<void> => {
      try {
        if (rest.length > 0) await writer.write(rest.slice());
        for (let chunk = await nextChunk(reader); chunk !== null; chunk = await nextChunk(reader)) {
          await writer.write(chunk.slice());
        }
        inputEnded = true;
        await writer.close();
      } catch (error) {
        if (!inputEnded) await writer.abort(error).catch(() => undefined);
      }
    })();
    const out = inflate.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await out.read();
        if (done) break;
        for (const record of decoder.push(value)) this.add(record);
      }
    } catch (error) {
      if (!inputEnded) throw error;
    } finally {
      out.releaseLock();
    }
    await pump;
  }
}

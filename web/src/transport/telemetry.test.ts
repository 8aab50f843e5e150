import { describe, expect, it } from 'vitest';
import { RingBuffer } from './ring';
import { TelemetryLog } from './telemetry';
import { encodeFrame } from './telemetry.testutil';

describe('RingBuffer', () => {
  it('keeps the last items, oldest first', () => {
    const r = new RingBuffer<number>(3);
    expect(r.toArray()).toEqual([]);
    [1, 2].forEach((x) => r.push(x));
    expect(r.toArray()).toEqual([1, 2]);
    [3, 4, 5].forEach((x) => r.push(x));
    expect(r.toArray()).toEqual([3, 4, 5]);
    expect(r.length).toBe(3);
    expect(r.dropped).toBe(2);
  });
  it('rejects a bad capacity', () => {
    expect(() => new RingBuffer(0)).toThrow(RangeError);
  });
});

describe('TelemetryLog', () => {
  it('reads a TELEMETRY uni stream delivered in odd chunks', async () => {
    const frames = [
      encodeFrame({ type: 'hello', session_id: 's', cc: 'cubic' }),
      encodeFrame({ type: 'sample', t_ms: 1, cwnd_bytes: 1000 }),
      encodeFrame({ type: 'sample', t_ms: 2, cwnd_bytes: 2000 }),
      encodeFrame({ type: 'sample', t_ms: 3, cwnd_bytes: 3000 }),
    ];
    const all = new Uint8Array([1, ...frames.flatMap((f) => [...f])]);
    const chunks = [all.subarray(0, 1), all.subarray(1, 3), all.subarray(3, 40), all.subarray(40)];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(c);
        controller.close();
      },
    });
    const log = new TelemetryLog(2);
    await log.readUniStream(stream);
    expect(log.records()).toEqual([
      { type: 'hello', session_id: 's', cc: 'cubic' },
      { type: 'sample', t_ms: 2, cwnd_bytes: 2000 },
      { type: 'sample', t_ms: 3, cwnd_bytes: 3000 },
    ]);
    expect(log.dropped).toBe(1);
  });

  it('ignores a stream of an unknown type', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array([9, 0, 0, 0, 2, 0x7b, 0x7d]));
        controller.close();
      },
    });
    const log = new TelemetryLog(10);
    await log.readUniStream(stream);
    expect(log.records()).toEqual([]);
    expect(log.warnings).toEqual(['ignored a unidirectional stream of unknown type 9']);
  });

  it('hands out copies', async () => {
    const log = new TelemetryLog(10);
    log.add({ type: 'link', t_ms: 1 });
    const first = log.records();
    const record = first[0];
    if (record) record['t_ms'] = 99;
    expect(log.records()).toEqual([{ type: 'link', t_ms: 1 }]);
  });
});

describe('TelemetryLog: TELEMETRY_DEFLATE', () => {
  it('inflates a raw-deflate stream, sync-flushed between records, in odd chunks', async () => {
    // Node's zlib (not typed in this browser project): the server's sync-flushed raw deflate.
    const moduleName = 'node:zlib';
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const zlib: any = await import(/* @vite-ignore */ moduleName);
    const deflate = zlib.createDeflateRaw();
    const out: Uint8Array[] = [];
    deflate.on('data', (c: Uint8Array) => out.push(c));
    const flush = (): Promise<void> => new Promise((resolve) => deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => resolve()));
    deflate.write(encodeFrame({ type: 'hello', session_id: 's', cc: 'vivace' }));
    await flush();
    for (let i = 1; i <= 50; i++) {
      deflate.write(encodeFrame({ type: 'sample', t_ms: i * 100, cwnd_bytes: 1000 + i }));
      if (i % 7 === 0) await flush();
    }
    await flush();
    const body = new Uint8Array(out.reduce((n, c) => n + c.length, 0));
    out.reduce((at, c) => (body.set(c, at), at + c.length), 0);
    const all = new Uint8Array([2, ...body]);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < all.length; i += 13) controller.enqueue(all.subarray(i, i + 13));
        controller.close();
      },
    });
    const log = new TelemetryLog();
    const seen: string[] = [];
    log.onRecord = (r) => seen.push(r.type);
    await log.readUniStream(stream);
    const records = log.records();
    expect(records).toHaveLength(51);
    expect(records[0]).toEqual({ type: 'hello', session_id: 's', cc: 'vivace' });
    expect(records[50]).toEqual({ type: 'sample', t_ms: 5000, cwnd_bytes: 1050 });
    expect(seen).toHaveLength(51);
    // Repetitive JSON compresses well: the reason this encoding exists.
    const plain = 51 * 40;
    expect(body.length).toBeLessThan(plain / 3);
  });
});

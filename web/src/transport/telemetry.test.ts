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

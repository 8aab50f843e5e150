import { describe, expect, it } from 'vitest';
import vectors from '../../../shared/vectors/protocol.json';
import { ProtocolError, hexToBytes } from '../protocol';
import { ServerError, readResponse } from './response';

function streamOf(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const bounds = [0, ...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i + 1 < bounds.length; i++) controller.enqueue(bytes.subarray(bounds[i], bounds[i + 1]));
      controller.close();
    },
  });
}

function vector(name: string): Uint8Array {
  const v = vectors.responses.find((r) => r.name === name);
  if (!v) throw new Error(name);
  return hexToBytes(v.hex);
}

function fakeClock(...times: number[]): () => number {
  let i = 0;
  return () => times[Math.min(i++, times.length - 1)] ?? 0;
}

describe('readResponse', () => {
  it('reads header and body split anywhere, with timing', async () => {
    const bytes = vector('segment ok');
    for (const cuts of [[], [1], [23, 24], [10, 25, 30]]) {
      const r = await readResponse(streamOf(bytes, cuts), 100, fakeClock(110, 150));
      expect(r.header.segment).toBe(7);
      expect(Array.from(r.body)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(r.timing).toEqual({
        startMs: 100,
        ttfbMs: 10,
        downloadMs: 50,
        transferMs: 40,
        bytes: 8,
        throughputKbps: (8 * 8) / 50,
      });
    }
  });

  it('hands an OK body over piece by piece as it arrives, when asked', async () => {
    const bytes = vector('segment ok');
    for (const cuts of [[], [24, 27], [10, 25, 30]]) {
      const pieces: number[][] = [];
      const r = await readResponse(streamOf(bytes, cuts), 100, fakeClock(110, 150), (piece) => pieces.push(Array.from(piece)));
      expect(r.body.length).toBe(0);
      expect(r.timing.bytes).toBe(8);
      expect(pieces.flat()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(pieces.length).toBe(cuts.filter((c) => c > 24).length + 1);
    }
  });

  it('keeps an error body for its message even when streaming', async () => {
    const pieces: Uint8Array[] = [];
    const err = await readResponse(streamOf(vector('unknown segment'), [30]), 0, fakeClock(1, 2), (p) => pieces.push(p)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(pieces).toEqual([]);
  });

  it('throws ServerError with the server message on an error status', async () => {
    const err = await readResponse(streamOf(vector('unknown segment'), [30]), 0, fakeClock(1, 2)).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).header.status).toBe('UNKNOWN_SEGMENT');
    expect((err as ServerError).message).toBe(
      'server answered UNKNOWN_SEGMENT: segment 999 is past the last segment (29) of rendition 0',
    );
  });

  it('rejects truncated and overlong responses', async () => {
    const bytes = vector('segment ok');
    await expect(readResponse(streamOf(bytes.subarray(0, 10), []), 0, fakeClock(1))).rejects.toThrow(/header bytes/);
    await expect(readResponse(streamOf(bytes.subarray(0, 28), []), 0, fakeClock(1))).rejects.toThrow(/4 of 8 body/);
    const long = new Uint8Array([...bytes, 9]);
    await expect(readResponse(streamOf(long, []), 0, fakeClock(1))).rejects.toThrow(ProtocolError);
  });
});

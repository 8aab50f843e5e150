import { describe, expect, it } from 'vitest';
import vectors from '../../../shared/vectors/protocol.json';
import { Kind, RESPONSE_HEADER_BYTES, UniStreamType, bytesToHex, hexToBytes, type KindName } from '../protocol';
import { PushedResponses, firstPushes, pushParameters, vodFirstPushes, type Timer } from './pushed';
import { readResponse } from './response';

/** A response as the server writes it: 24-byte header (status OK), then the body. */
function response(kind: number, rendition: number, segment: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(RESPONSE_HEADER_BYTES + body.length);
  const view = new DataView(out.buffer);
  view.setUint8(0, 1); // version
  view.setUint8(1, 0); // status OK
  view.setUint8(2, kind);
  view.setUint16(4, rendition);
  view.setUint32(8, segment);
  view.setUint32(12, body.length);
  out.set(body, RESPONSE_HEADER_BYTES);
  return out;
}

/** The pieces, then the end (or, with `open`, nothing more: the stream stays open). */
function streamOf(pieces: Uint8Array[], open = false): ReadableStream<Uint8Array> & { cancelled: boolean } {
  const queue = [...pieces];
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = queue.shift();
      if (next !== undefined) controller.enqueue(next);
      else if (!open) controller.close();
    },
    cancel() {
      flagged.cancelled = true;
    },
  });
  const flagged = Object.assign(stream, { cancelled: false });
  return flagged;
}

/** A timer that fires only when told to. */
class ManualTimer implements Timer {
  callbacks = new Map<number, () => void>();
  private next = 0;
  set(callback: () => void): unknown {
    this.callbacks.set(++this.next, callback);
    return this.next;
  }
  clear(handle: unknown): void {
    this.callbacks.delete(handle as number);
  }
  fireAll(): void {
    const all = [...this.callbacks.values()];
    this.callbacks.clear();
    for (const callback of all) callback();
  }
}

const body = new Uint8Array([1, 2, 3, 4, 5]);

describe('PushedResponses', () => {
  it('hands a pushed stream that arrived first to its request, header included, exactly once', async () => {
    const pushed = new PushedResponses(vodFirstPushes(0, 0), 10, new ManualTimer(), 1500, () => 15);
    const all = response(Kind.SEGMENT, 0, 0, body);
    await pushed.deliver(streamOf([all.subarray(0, 7), all.subarray(7, 30)]));
    const claimed = pushed.claim('SEGMENT', 0, 0);
    expect(claimed).not.toBeNull();
    const got = await claimed;
    if (!got) throw new Error('no stream');
    expect(got.firstByteMs).toBe(15); // when deliver() read it, not when it was claimed
    const res = await readResponse(got.stream, pushed.requestedAtMs, () => 20);
    expect(res.header.kind).toBe(Kind.SEGMENT);
    expect([...res.body]).toEqual([...body]);
    expect(res.timing.startMs).toBe(10); // timed from the CONNECT that asked for it
    expect(pushed.claim('SEGMENT', 0, 0)).toBeNull(); // a second request is sent
  });

  it('gives a request claimed before its stream arrives the stream when it comes', async () => {
    const timer = new ManualTimer();
    const pushed = new PushedResponses(vodFirstPushes(0, 0), 0, timer);
    const claimed = pushed.claim('INIT', 0, 0);
    await pushed.deliver(streamOf([response(Kind.INIT, 0, 0, body)]));
    expect(timer.callbacks.size).toBe(0); // the fallback timer is cleared
    expect(await claimed).not.toBeNull();
  });

  it('falls back to a request when the stream does not come, and cancels it if it comes later', async () => {
    const timer = new ManualTimer();
    const pushed = new PushedResponses(vodFirstPushes(0, 0), 0, timer);
    const claimed = pushed.claim('INIT', 0, 0);
    timer.fireAll();
    expect(await claimed).toBeNull();
    const late = streamOf([response(Kind.INIT, 0, 0, body)], true);
    await pushed.deliver(late);
    expect(late.cancelled).toBe(true);
    expect(pushed.cancelled).toBe(1);
  });

  it('sends the requests it has nothing pushed for, and cancels streams nobody asked for', async () => {
    const pushed = new PushedResponses(vodFirstPushes(0, 0), 0, new ManualTimer());
    expect(pushed.claim('MANIFEST', 0, 0)).toBeNull();
    expect(pushed.claim('SEGMENT', 0, 1)).toBeNull();
    const unasked = streamOf([response(Kind.SEGMENT, 2, 0, body)], true);
    await pushed.deliver(unasked);
    expect(unasked.cancelled).toBe(true);
    const short = streamOf([new Uint8Array(5)]);
    await pushed.deliver(short);
    expect(pushed.cancelled).toBe(2);
  });
});

describe('firstPushes', () => {
  it('asks for rendition 0 init and segment 0 with startRendition=lowest on VOD only', () => {
    expect(firstPushes({ mode: 'fixed', startRendition: 'lowest' })).toEqual([
      { kind: 'INIT', rendition: 0, segment: 0 },
      { kind: 'SEGMENT', rendition: 0, segment: 0 },
    ]);
    expect(firstPushes({ mode: 'abr' })).toHaveLength(2); // lowest is the VOD default
    expect(firstPushes({ mode: 'fixed', startRendition: 'abr' })).toEqual([{ kind: 'MANIFEST', rendition: 0, segment: 0 }]);
    expect(firstPushes({ mode: 'live', startRendition: 'lowest' })).toEqual([]);
  });

  it('names them in the CONNECT as index.html does', () => {
    expect(pushParameters(firstPushes({ mode: 'fixed', startRendition: 'lowest' }))).toEqual([['vod.first', '0:0']]);
    expect(pushParameters(firstPushes({ mode: 'fixed', startRendition: 'abr' }))).toEqual([['vod.manifest', '1']]);
    expect(pushParameters([])).toEqual([]);
  });
});

describe('PUSHED_RESPONSE vectors (shared/vectors/protocol.json)', () => {
  it('names the stream types as the server does', () => {
    expect(vectors.uni_stream_types).toEqual(UniStreamType);
  });

  it.each(vectors.pushed_responses)('$name reaches its request through the type byte and header', async (vector) => {
    const all = hexToBytes(vector.hex);
    expect(all[0]).toBe(UniStreamType.PUSHED_RESPONSE);
    const d = vector.decoded;
    const kind = d.kind as KindName;
    const pushed = new PushedResponses([{ kind, rendition: d.rendition, segment: d.segment }], 0, new ManualTimer());
    await pushed.deliver(streamOf([all.subarray(1)]));
    const got = await pushed.claim(kind, d.rendition, d.segment);
    if (!got) throw new Error('not delivered');
    const res = await readResponse(got.stream, 0, () => 1);
    expect(res.header.status).toBe(d.status);
    expect(bytesToHex(res.body)).toBe(d.body_hex);
  });
});

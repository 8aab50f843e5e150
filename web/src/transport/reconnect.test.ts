import { describe, expect, it } from 'vitest';
import type { KindName } from '../protocol';
import { ReconnectingSession, backoffMs, countedFrom, type SessionLike } from './reconnect';
import type { Response } from './response';
import { TransportError } from './session';
import { fakeClockReconnectOptions } from './reconnect.testutil';

function response(segment: number): Response {
  return {
    header: { version: 1, status: 0, kind: 3, rendition: 0, segment, bodyLength: 0, serverTimeUs: 0n },
    body: new Uint8Array(0),
    timing: { startMs: 0, ttfbMs: 0, downloadMs: 1, transferMs: 1, bytes: 0, throughputKbps: 0 },
  } as unknown as Response;
}

class FakeSession implements SessionLike {
  closedReason: string | null = null;
  readonly asked: number[] = [];
  constructor(
    readonly url: string,
    private readonly failFrom = Infinity,
  ) {}
  request(_kind: KindName, _rendition = 0, segment = 0): Promise<Response> {
    this.asked.push(segment);
    if (segment >= this.failFrom) {
      this.closedReason = 'gone';
      return Promise.reject(new TransportError('WebTransport session closed'));
    }
    return Promise.resolve(response(segment));
  }
  close(): void {
    this.closedReason ??= 'closed';
  }
}

const options = fakeClockReconnectOptions;

describe('ReconnectingSession', () => {
  it('redials with backoff and sends the failed request again on the new session', async () => {
    const first = new FakeSession('a', 3);
    const second = new FakeSession('b');
    const dials = [() => Promise.reject(new Error('refused')), () => Promise.reject(new Error('refused')), () => Promise.resolve(second)];
    const o = options();
    const session = new ReconnectingSession(first, () => (dials.shift() ?? (() => Promise.reject(new Error('no'))))(), o);
    for (const segment of [0, 1, 2, 3, 4]) expect((await session.request('SEGMENT', 0, segment)).header.segment).toBe(segment);
    expect(first.asked).toEqual([0, 1, 2, 3]);
    expect(second.asked).toEqual([3, 4]); // resumes at the segment that failed
    expect(o.slept).toEqual([250, 500, 1000]);
    expect(session.reconnects).toBe(1);
    expect(session.url).toBe('b');
    expect(session.closedReason).toBeNull();
  });

  it('concurrent failures share one redial', async () => {
    const first = new FakeSession('a', 0);
    let dialled = 0;
    const session = new ReconnectingSession(first, () => {
      dialled += 1;
      return Promise.resolve(new FakeSession('b'));
    }, options());
    const answers = await Promise.all([1, 2, 3].map((s) => session.request('SEGMENT', 0, s)));
    expect(answers.map((a) => a.header.segment)).toEqual([1, 2, 3]);
    expect(dialled).toBe(1);
  });

  it('gives up after the deadline with one clear reason', async () => {
    const o = options();
    const session = new ReconnectingSession(new FakeSession('a', 0), () => Promise.reject(new Error('connection refused')), o);
    await expect(session.request('SEGMENT', 0, 0)).rejects.toThrow(/reconnecting failed for 10 s: connection refused/);
    expect(session.closedReason).toMatch(/reconnecting failed/);
    expect(o.slept.every((ms) => ms <= 4000)).toBe(true);
  });

  it('does not retry errors that are not transport failures', async () => {
    const failing: SessionLike = {
      url: 'a',
      closedReason: null,
      request: () => Promise.reject(new Error('UNKNOWN_SEGMENT')),
      close: () => undefined,
    };
    const session = new ReconnectingSession(failing, () => Promise.reject(new Error('never')), options());
    await expect(session.request('SEGMENT', 0, 99)).rejects.toThrow('UNKNOWN_SEGMENT');
    expect(session.reconnects).toBe(0);
  });

  it('a retried request counts its time from the first attempt', () => {
    const t = { startMs: 5000, ttfbMs: 20, downloadMs: 100, transferMs: 80, bytes: 1000, throughputKbps: 80 };
    expect(countedFrom(5000, t)).toBe(t);
    expect(countedFrom(1000, t)).toEqual({ startMs: 1000, ttfbMs: 4020, downloadMs: 4100, transferMs: 80, bytes: 1000, throughputKbps: 8000 / 4100 });
  });

  it('the wait for a new session is part of the retried request download time', async () => {
    const o = options();
    let clock = 0;
    o.now = () => clock;
    const sleep = o.sleep;
    o.sleep = async (ms) => {
      clock += ms;
      await sleep(ms);
    };
    const second: SessionLike = {
      url: 'b',
      closedReason: null,
      request: () => Promise.resolve({ ...response(3), timing: { startMs: clock, ttfbMs: 5, downloadMs: 10, transferMs: 5, bytes: 100, throughputKbps: 80 } }),
      close: () => undefined,
    };
    const session = new ReconnectingSession(new FakeSession('a', 0), () => Promise.resolve(second), o);
    const answer = await session.request('SEGMENT', 0, 3);
    expect(answer.timing.startMs).toBe(0);
    expect(answer.timing.downloadMs).toBe(260); // 250 ms backoff + 10 ms on the new session
  });

  it('backoff doubles up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 40].map((n) => backoffMs(n, { firstDelayMs: 250, maxDelayMs: 4000 }))).toEqual([
      250, 500, 1000, 2000, 4000, 4000, 4000,
    ]);
  });

  it('streams the body to onBody, and after a retry hands on only the bytes not yet seen', async () => {
    const body = Uint8Array.from({ length: 10 }, (_, i) => i);
    /** Sends the body in pieces of 4; the first session fails after 6 bytes. */
    class StreamingSession extends FakeSession {
      constructor(
        url: string,
        private readonly failAfter: number,
      ) {
        super(url);
      }
      override request(kind: KindName, rendition = 0, segment = 0, onBody?: (piece: Uint8Array) => void): Promise<Response> {
        for (let at = 0; at < body.length; at += 4) {
          if (at >= this.failAfter) return Promise.reject(new TransportError('WebTransport session closed'));
          onBody?.(body.subarray(at, Math.min(at + 4, this.failAfter, body.length)));
          if (at + 4 > this.failAfter) return Promise.reject(new TransportError('WebTransport session closed'));
        }
        return super.request(kind, rendition, segment);
      }
    }
    const session = new ReconnectingSession(new StreamingSession('a', 6), () => Promise.resolve(new StreamingSession('b', Infinity)), options());
    const pieces: number[] = [];
    await session.request('SEGMENT', 0, 0, (piece) => pieces.push(...piece));
    expect(pieces).toEqual([...body]);
  });
});

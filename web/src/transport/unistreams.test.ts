import { describe, expect, it } from 'vitest';
import { encodeLiveGroup, LiveGroupParser } from '../protocol';
import { TelemetryLog } from './telemetry';
import { encodeFrame } from './telemetry.testutil';
import { LiveGroupInbox, MAX_PENDING_GROUPS, routeUniStream, type LiveGroupStream } from './unistreams';

/** One piece per read, then the end (or `error`, after the pieces were read). */
function streamOf(pieces: Uint8Array[], error?: Error): ReadableStream<Uint8Array> {
  const queue = [...pieces];
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = queue.shift();
      if (next !== undefined) controller.enqueue(next);
      else if (error) controller.error(error);
      else controller.close();
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const out: number[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    out.push(...value);
  }
  return new Uint8Array(out);
}

describe('routeUniStream', () => {
  it('passes telemetry streams (type byte included) to the telemetry log', async () => {
    const log = new TelemetryLog();
    const inbox = new LiveGroupInbox();
    const frame = encodeFrame({ type: 'hello', session_id: 's' });
    const all = new Uint8Array([1, ...frame]);
    await routeUniStream(streamOf([all.subarray(0, 3), all.subarray(3)]), { telemetry: (s) => log.readUniStream(s), liveGroups: inbox });
    expect(log.records()).toEqual([{ type: 'hello', session_id: 's' }]);
    expect(inbox.received).toBe(0);
  });

  it('hands LIVE_GROUP streams without their type byte to the inbox, split anywhere', async () => {
    const bytes = encodeLiveGroup({ rendition: 1, group: 9, captureUs: 123 }, [{ firstFrame: 0, frameCount: 1, data: new Uint8Array([1, 2, 3]) }]);
    for (const cut of [1, 2, 17, bytes.length - 1]) {
      const inbox = new LiveGroupInbox();
      const got: LiveGroupStream[] = [];
      inbox.setHandler((s) => got.push(s));
      await routeUniStream(streamOf([bytes.subarray(0, cut), bytes.subarray(cut)]), { telemetry: async () => undefined, liveGroups: inbox });
      expect(got).toHaveLength(1);
      const parser = new LiveGroupParser();
      const chunks = parser.push(await readAll(got[0] as LiveGroupStream));
      parser.end();
      expect(parser.header).toEqual({ rendition: 1, group: 9, captureUs: 123 });
      expect(chunks.map((c) => [...c.data])).toEqual([[1, 2, 3]]);
    }
  });

  it('a reset group stream errors for its reader', async () => {
    const bytes = encodeLiveGroup({ rendition: 0, group: 1, captureUs: 0 });
    const inbox = new LiveGroupInbox();
    let stream: LiveGroupStream | null = null;
    inbox.setHandler((s) => (stream = s));
    await routeUniStream(streamOf([bytes], new Error('reset, code 1')), { telemetry: async () => undefined, liveGroups: inbox });
    expect(stream).not.toBeNull();
    await expect(readAll(stream as unknown as LiveGroupStream)).rejects.toThrow(/reset/);
  });

  it('ignores a stream reset before its first byte', async () => {
    const inbox = new LiveGroupInbox();
    await routeUniStream(streamOf([], new Error('reset')), { telemetry: async () => undefined, liveGroups: inbox });
    expect(inbox.received).toBe(0);
  });
});

describe('LiveGroupInbox', () => {
  it('holds streams until a handler is set, cancelling the oldest beyond the limit', async () => {
    const inbox = new LiveGroupInbox();
    const cancelled: number[] = [];
    const streams = Array.from({ length: MAX_PENDING_GROUPS + 2 }, (_, i) => new ReadableStream<Uint8Array>({ cancel: () => void cancelled.push(i) }));
    for (const s of streams) inbox.deliver(s);
    await Promise.resolve();
    expect(cancelled).toEqual([0, 1]);
    const got: LiveGroupStream[] = [];
    inbox.setHandler((s) => got.push(s));
    expect(got).toEqual(streams.slice(2));
    inbox.deliver(streams[0] as LiveGroupStream);
    expect(got).toHaveLength(MAX_PENDING_GROUPS + 1);
    expect(inbox.received).toBe(MAX_PENDING_GROUPS + 3);
  });
});

/**
 * Server → client unidirectional streams by type (shared/PROTOCOL.md): telemetry streams go to
 * the TelemetryLog, LIVE_GROUP streams to whoever plays the live channel (the LiveGroupInbox).
 */

import { UniStreamType } from '../protocol';
import type { PushedResponses } from './pushed';
import { nextChunk } from './read';

/** A LIVE_GROUP stream: the bytes after its type byte. Errors if the server reset it. */
export type LiveGroupStream = ReadableStream<Uint8Array>;
export type LiveGroupHandler = (stream: LiveGroupStream) => void;

/** Streams that arrive before a handler is set are kept, at most this many (oldest cancelled). */
export const MAX_PENDING_GROUPS = 8;

/**
 * Hands LIVE_GROUP streams to the live player. A group stream can arrive before the SUBSCRIBE
 * answer (streams race), so streams are held until a handler is set.
 */
export class LiveGroupInbox {
  private handler: LiveGroupHandler | null = null;
  private pending: LiveGroupStream[] = [];
  /** Group streams received (cancelled ones included). */
  received = 0;

  deliver(stream: LiveGroupStream): void {
    this.received += 1;
    if (this.handler !== null) {
      this.handler(stream);
      return;
    }
    this.pending.push(stream);
    while (this.pending.length > MAX_PENDING_GROUPS) {
      void this.pending.shift()?.cancel('nobody plays the live channel').catch(() => undefined);
    }
  }

  /** Set (or clear) the handler; streams held so far are handed over, oldest first. */
  setHandler(handler: LiveGroupHandler | null): void {
    this.handler = handler;
    if (handler === null) return;
    const held = this.pending;
    this.pending = [];
    for (const stream of held) handler(stream);
  }
}

/** A stream yielding `first`, then the rest of `reader` (which it keeps locked). */
export function prependChunk(first: Uint8Array, reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  let sentFirst = first.length === 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sentFirst) {
        sentFirst = true;
        controller.enqueue(first);
        return;
      }
      const { value, done } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

export interface UniStreamSinks {
  /** Reads a telemetry stream (type byte included) to its end. */
  telemetry(stream: ReadableStream<Uint8Array>): Promise<void>;
  liveGroups: LiveGroupInbox;
  /** Where PUSHED_RESPONSE streams go (absent: they are cancelled, nothing asked for them). */
  pushed?: PushedResponses;
}

/**
 * Look at a unidirectional stream's type byte and pass it on: LIVE_GROUP streams (without the
 * type byte) to the inbox, everything else (with it) to the telemetry reader, which knows the
 * telemetry types and warns about unknown ones. Resolves when the stream has been handed over
 * (live) or read to its end (telemetry). A stream reset before its first byte is ignored.
 */
export async function routeUniStream(stream: ReadableStream<Uint8Array>, sinks: UniStreamSinks): Promise<void> {
  const reader = stream.getReader();
  let first: Uint8Array | null;
  try {
    first = await nextChunk(reader);
  } catch {
    reader.releaseLock();
    return; // reset before its type byte arrived: nothing to route (e.g. a superseded group)
  }
  if (first === null) {
    reader.releaseLock();
    return;
  }
  if (first[0] === UniStreamType.LIVE_GROUP) {
    sinks.liveGroups.deliver(prependChunk(first.subarray(1), reader));
    return;
  }
  if (first[0] === UniStreamType.PUSHED_RESPONSE) {
    const stream = prependChunk(first.subarray(1), reader);
    if (sinks.pushed) await sinks.pushed.deliver(stream);
    else await stream.cancel('no pushed response was asked for').catch(() => undefined);
    return;
  }
  await sinks.telemetry(prependChunk(first, reader));
}

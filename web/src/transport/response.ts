import { RESPONSE_HEADER_BYTES, decodeResponseHeader, ProtocolError, type ResponseHeader } from '../protocol';
import { nextChunk } from './read';

export interface Timing {
  /** Page clock (performance.now()) when the request started, before opening the stream. */
  startMs: number;
  /** Request start → first response byte. */
  ttfbMs: number;
  /** Request start → last body byte. */
  downloadMs: number;
  /** First response byte → last body byte. */
  transferMs: number;
  /** Body bytes (the 24-byte header excluded). */
  bytes: number;
  /** bytes × 8 / downloadMs, kbit/s (bits per ms). */
  throughputKbps: number;
}

export interface Response {
  header: ResponseHeader;
  body: Uint8Array<ArrayBuffer>;
  timing: Timing;
}

/** A response whose status is not OK; `message` carries the server's text. */
export class ServerError extends Error {
  constructor(
    readonly header: ResponseHeader,
    readonly serverMessage: string,
  ) {
    super(`server answered ${header.status}: ${serverMessage}`);
    this.name = 'ServerError';
  }
}

/**
 * Read a whole response (header, body, FIN) from a request stream. `now` is the page clock;
 * `startMs` the request's start on it. Checks that the body is exactly `body_length` bytes.
 * With `onBody`, the body of an OK response is handed over piece by piece as it arrives
 * instead of being kept (`body` is then empty; `timing.bytes` still counts it).
 */
export async function readResponse(
  readable: ReadableStream<Uint8Array>,
  startMs: number,
  now: () => number,
  onBody?: (piece: Uint8Array) => void,
): Promise<Response> {
  const reader = readable.getReader();
  try {
    let firstByteMs: number | null = null;
    let head = new Uint8Array(0);
    let header: ResponseHeader | null = null;
    let body = new Uint8Array(0);
    let filled = 0;
    let streamed = false;
    for (;;) {
      const chunk = await nextChunk(reader);
      if (chunk === null) break;
      if (firstByteMs === null) firstByteMs = now();
      let data = chunk;
      if (header === null) {
        const need = RESPONSE_HEADER_BYTES - head.length;
        const joined = new Uint8Array(head.length + Math.min(need, data.length));
        joined.set(head, 0);
        joined.set(data.subarray(0, need), head.length);
        head = joined;
        data = data.subarray(need);
        if (head.length < RESPONSE_HEADER_BYTES) continue;
        header = decodeResponseHeader(head);
        streamed = onBody !== undefined && header.status === 'OK';
        body = new Uint8Array(streamed ? 0 : header.bodyLength);
      }
      if (filled + data.length > header.bodyLength) {
        throw new ProtocolError(`response body longer than body_length ${header.bodyLength}`);
      }
      if (data.length === 0) continue;
      if (streamed && onBody) onBody(data);
      else body.set(data, filled);
      filled += data.length;
    }
    const endMs = now();
    if (header === null) {
      throw new ProtocolError(`response stream ended after ${head.length} of ${RESPONSE_HEADER_BYTES} header bytes`);
    }
    if (filled !== header.bodyLength) {
      throw new ProtocolError(`response stream ended after ${filled} of ${header.bodyLength} body bytes`);
    }
    if (header.status !== 'OK') {
      throw new ServerError(header, new TextDecoder().decode(body));
    }
    const first = firstByteMs ?? endMs;
    const downloadMs = Math.max(endMs - startMs, 1e-3);
    return {
      header,
      body,
      timing: {
        startMs,
        ttfbMs: first - startMs,
        downloadMs,
        transferMs: endMs - first,
        bytes: filled,
        throughputKbps: (filled * 8) / downloadMs,
      },
    };
  } finally {
    reader.releaseLock();
  }
}

import { transportErrorMessage } from '../errors';
import type { KindName } from '../protocol';
import type { Response, Timing } from './response';
import { TransportError } from './session';

/** What the reconnecting wrapper needs of one session (Session; a fake in tests). */
export interface SessionLike {
  readonly url: string;
  readonly closedReason: string | null;
  request(
    kind: KindName,
    rendition?: number,
    segment?: number,
    onBody?: (piece: Uint8Array) => void,
  ): Promise<Response>;
  close(): void;
}

export interface ReconnectOptions {
  /** First wait before redialling; doubles per failed attempt up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** Stop trying (and fail the request) after this long without a session. */
  giveUpAfterMs: number;
  sleep(ms: number): Promise<void>;
  now(): number;
  /** Progress for the page ("reconnecting…", "reconnected"). */
  status(text: string): void;
}

export const DEFAULT_RECONNECT: Omit<ReconnectOptions, 'status'> = {
  firstDelayMs: 250,
  maxDelayMs: 4000,
  giveUpAfterMs: 60_000,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  now: () => performance.now(),
};

/**
 * A response's timing counted from the first attempt, so the time spent reconnecting is part
 * of the segment's download (its throughput drops accordingly), not hidden by the retry.
 */
export function countedFrom(firstStartMs: number, timing: Timing): Timing {
  const waitedMs = Math.max(0, timing.startMs - firstStartMs);
  if (waitedMs === 0) return timing;
  const downloadMs = timing.downloadMs + waitedMs;
  return {
    ...timing,
    startMs: firstStartMs,
    ttfbMs: timing.ttfbMs + waitedMs,
    downloadMs,
    throughputKbps: downloadMs > 0 ? (timing.bytes * 8) / downloadMs : timing.throughputKbps,
  };
}

/** Backoff before attempt `n` (0-based): first·2^n, capped. */
export function backoffMs(attempt: number, options: Pick<ReconnectOptions, 'firstDelayMs' | 'maxDelayMs'>): number {
  return Math.min(options.maxDelayMs, options.firstDelayMs * 2 ** Math.min(attempt, 30));
}

/**
 * A session that survives its connection: a request that fails because the session closed or
 * failed (server restart, network gone long enough for QUIC to give up) waits while the
 * session is redialled with exponential backoff, then is sent again on the new session. The
 * VOD player asks for segments by index, so it resumes at the segment it was fetching;
 * the time spent waiting shows up as a stall in the metrics, as it should.
 */
export class ReconnectingSession<S extends SessionLike = SessionLike> implements SessionLike {
  /** Sessions opened after the first. */
  reconnects = 0;
  /** Called with each session opened after the first, before failed requests are sent again. */
  onSession: ((session: S) => void) | null = null;
  private session: S;
  private redialling: Promise<void> | null = null;
  private gaveUp: string | null = null;
  private closed = false;

  constructor(
    first: S,
    private readonly dial: () => Promise<S>,
    private readonly options: ReconnectOptions,
  ) {
    this.session = first;
  }

  get url(): string {
    return this.session.url;
  }

  /** The session requests go to now. */
  get current(): S {
    return this.session;
  }

  /** Only once reconnecting has been given up (a closed session is otherwise redialled). */
  get closedReason(): string | null {
    return this.gaveUp;
  }

  async request(
    kind: KindName,
    rendition = 0,
    segment = 0,
    onBody?: (piece: Uint8Array) => void,
  ): Promise<Response> {
    let firstStartMs: number | null = null;
    // Body bytes already handed to `onBody`: a retry sends the body again from its start, and
    // the chunk parser must see each byte once.
    let delivered = 0;
    for (;;) {
      const session = this.session;
      firstStartMs ??= this.options.now();
      let seen = 0;
      const forward = onBody
        ? (piece: Uint8Array): void => {
            const skip = Math.max(0, Math.min(piece.byteLength, delivered - seen));
            seen += piece.byteLength;
            if (skip < piece.byteLength) {
              onBody(skip > 0 ? piece.subarray(skip) : piece);
              delivered = seen;
            }
          }
        : undefined;
      try {
        const response = await session.request(kind, rendition, segment, forward);
        return { ...response, timing: countedFrom(firstStartMs, response.timing) };
      } catch (error) {
        if (!(error instanceof TransportError) || this.closed) throw error;
        await this.redial(session, error);
      }
    }
  }

  close(): void {
    this.closed = true;
    this.session.close();
  }

  /**
   * `failed` closed with no request to notice it (a live subscription only receives): redial
   * now. Resolves once a new session is up; rejects when reconnecting is given up or closed.
   */
  lost(failed: S, cause: TransportError): Promise<void> {
    if (this.closed) return Promise.reject(cause);
    return this.redial(failed, cause);
  }

  /** One redial for every request that failed on `failed` (concurrent ones share it). */
  private redial(failed: S, cause: TransportError): Promise<void> {
    if (this.session !== failed) return Promise.resolve();
    this.redialling ??= this.redialLoop(failed, cause).finally(() => {
      this.redialling = null;
    });
    return this.redialling;
  }

  private async redialLoop(failed: S, cause: TransportError): Promise<void> {
    failed.close();
    const o = this.options;
    const started = o.now();
    let last = cause.message;
    for (let attempt = 0; ; attempt++) {
      const delay = backoffMs(attempt, o);
      if (o.now() - started + delay > o.giveUpAfterMs) {
        this.gaveUp = `the session closed and reconnecting failed for ${Math.round(o.giveUpAfterMs / 1000)} s: ${last}`;
        throw new TransportError(this.gaveUp);
      }
      o.status(`connection lost (${cause.message}); reconnecting in ${delay} ms (attempt ${attempt + 1})`);
      await o.sleep(delay);
      if (this.closed) throw cause;
      let next: S;
      try {
        next = await this.dial();
      } catch (error) {
        last = transportErrorMessage(error);
        continue;
      }
      if (this.closed) {
        next.close();
        throw cause;
      }
      this.session = next;
      this.reconnects += 1;
      o.status(`reconnected (${this.reconnects} so far)`);
      this.onSession?.(next);
      return;
    }
  }
}

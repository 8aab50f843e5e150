import { transportErrorMessage } from '../errors';
import type { StartupTimeline } from '../metrics/startup';
import { encodeRequest, type KindName } from '../protocol';
import type { EarlySession } from './early';
import { PushedResponses, type PushKey } from './pushed';
import { readResponse, type Response } from './response';
import { TelemetryLog } from './telemetry';
import { LiveGroupInbox, routeUniStream } from './unistreams';

export class TransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransportError';
  }
}

/**
 * One WebTransport session to the server: requests on bidirectional streams, telemetry from
 * the server's unidirectional streams.
 */
export class Session {
  readonly telemetry: TelemetryLog;
  /** LIVE_GROUP streams of the live channel, for the live player (src/watch/live.ts). */
  readonly liveGroups = new LiveGroupInbox();
  /** Set when the session closes or fails (null while it is up). */
  closedReason: string | null = null;
  /** Resolves (never rejects) with `closedReason` once the session has closed or failed. */
  readonly closed: Promise<string>;
  private readonly pending = new Set<Promise<unknown>>();

  private constructor(
    readonly url: string,
    private readonly transport: WebTransport,
    telemetry: TelemetryLog,
    private readonly startup: StartupTimeline | null,
    private readonly pushed: PushedResponses | null = null,
  ) {
    this.telemetry = telemetry;
    this.closed = transport.closed.then(
      (info) => (this.closedReason = `WebTransport session closed${info.reason ? `: ${info.reason}` : ''} (code ${info.closeCode ?? 0})`),
      (error: unknown) => (this.closedReason = `WebTransport session failed: ${transportErrorMessage(error)}`),
    );
    void this.acceptUniStreams();
  }

  /**
   * Open a session; `certHash` is the SHA-256 of the server's DER certificate. `startup`
   * records when the session started and was ready, and its requests' first send and byte.
   * `pushes`: the responses `url` asks the server to push (its `vod.first`; vodFirstPushes);
   * `request` then takes them instead of sending those requests. `early`: the session
   * index.html opened to `url` before the modules loaded, used instead of a new one.
   */
  static async connect(
    url: string,
    certHash: Uint8Array | null,
    telemetry = new TelemetryLog(),
    startup: StartupTimeline | null = null,
    pushes: readonly PushKey[] = [],
    early: EarlySession | null = null,
  ): Promise<Session> {
    if (typeof WebTransport === 'undefined') {
      throw new TransportError('this browser has no WebTransport (it needs a secure context: https or http://127.0.0.1)');
    }
    const options: WebTransportOptions = {};
    if (certHash !== null) {
      const value = new Uint8Array(certHash); // a copy backed by a plain ArrayBuffer
      options.serverCertificateHashes = [{ algorithm: 'sha-256', value }];
    }
    let transport: WebTransport;
    // `early`: index.html already opened this very URL (transport/early.ts).
    const startMs = early?.startMs ?? performance.now();
    startup?.mark('sessionStartMs', startMs);
    try {
      transport = early?.transport ?? new WebTransport(url, options);
    } catch (error) {
      throw new TransportError(`WebTransport to ${url} could not start: ${transportErrorMessage(error)}`);
    }
    try {
      await transport.ready;
    } catch (error) {
      // The browser hides the server's answer: say what commonly causes this.
      throw new TransportError(
        `WebTransport to ${url} failed: ${transportErrorMessage(error)} ` +
          '(nothing listening there, a certificate hash that does not match, or the server refused ' +
          'the session parameters — an unknown cc, cc.* or test.* parameter is answered 400)',
      );
    }
    startup?.mark('sessionReadyMs', performance.now());
    const pushed = pushes.length > 0 ? new PushedResponses(pushes, startMs) : null;
    return new Session(url, transport, telemetry, startup, pushed);
  }

  private async acceptUniStreams(): Promise<void> {
    const reader = this.transport.incomingUnidirectionalStreams.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        const job = routeUniStream(value as ReadableStream<Uint8Array>, {
          telemetry: (stream) => this.telemetry.readUniStream(stream),
          liveGroups: this.liveGroups,
          ...(this.pushed ? { pushed: this.pushed } : {}),
        }).catch((error: unknown) => {
          this.telemetry.warnings.push(`telemetry stream: ${transportErrorMessage(error)}`);
        });
        this.pending.add(job);
        void job.finally(() => this.pending.delete(job));
      }
    } catch {
      // The session closed; `closedReason` says why.
    } finally {
      reader.releaseLock();
    }
  }

  /**
   * One request on a new bidirectional stream; resolves with the whole response. With
   * `onBody`, an OK response's body goes there piece by piece as it arrives (see readResponse).
   */
  async request(kind: KindName, rendition = 0, segment = 0, onBody?: (piece: Uint8Array) => void): Promise<Response> {
    const claimed = this.pushed?.claim(kind, rendition, segment) ?? null;
    const pushed = claimed === null ? null : await claimed;
    if (pushed !== null && this.pushed !== null) {
      // Its request went with the CONNECT: timing (and throughput) count from there, and its
      // first byte is when the stream arrived, not when the player took it.
      const requestedAtMs = this.pushed.requestedAtMs;
      this.startup?.mark('requestSentMs', requestedAtMs);
      this.startup?.mark('firstByteMs', pushed.firstByteMs);
      return this.finish(kind, rendition, segment, readResponse(pushed.stream, requestedAtMs, () => performance.now(), onBody));
    }
    const startMs = performance.now();
    let stream: WebTransportBidirectionalStream;
    try {
      stream = await this.transport.createBidirectionalStream();
    } catch (error) {
      throw new TransportError(this.closedReason ?? `could not open a request stream: ${transportErrorMessage(error)}`);
    }
    const writer = stream.writable.getWriter();
    // The response is read from the moment the request is written, not after close() (the
    // FIN) resolves: the first bytes are taken as soon as they arrive.
    const reading = readResponse(stream.readable as ReadableStream<Uint8Array>, startMs, () => performance.now(), onBody);
    reading.catch(() => undefined); // awaited below unless sending fails
    try {
      // Write and close queued together, so that the request and its FIN can leave in one
      // packet (the server answers on FIN).
      const written = writer.write(encodeRequest({ kind, rendition, segment }));
      const closed = writer.close();
      closed.catch(() => undefined); // awaited below unless the write fails
      await written;
      this.startup?.mark('requestSentMs', performance.now());
      await closed;
    } catch (error) {
      throw new TransportError(`could not send the ${kind} request: ${transportErrorMessage(error)}`);
    } finally {
      writer.releaseLock();
    }
    return this.finish(kind, rendition, segment, reading);
  }

  /** The response being read, with its first byte marked and stream failures explained. */
  private async finish(kind: KindName, rendition: number, segment: number, reading: Promise<Response>): Promise<Response> {
    try {
      const response = await reading;
      this.startup?.mark('firstByteMs', response.timing.startMs + response.timing.ttfbMs);
      return response;
    } catch (error) {
      if (error instanceof TypeError || (error instanceof Error && error.name === 'WebTransportError')) {
        throw new TransportError(
          `${kind} ${rendition}/${segment}: ${this.closedReason ?? `stream failed: ${transportErrorMessage(error)}`}`,
        );
      }
      throw error;
    }
  }

  close(): void {
    try {
      this.transport.close({ closeCode: 0, reason: 'player closed' });
    } catch {
      // already closed
    }
  }
}

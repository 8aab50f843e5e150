import { transportErrorMessage } from '../errors';
import type { StartupTimeline } from '../metrics/startup';
import { DEFAULT_LIVE_LATENCY_MS } from '../params';
import { encodeRequest, type KindName } from '../protocol';
import type { EarlySession } from './early';
import { LiveDatagramAssembler, newLiveDatagramCounters, type LiveDatagramCounters } from './live-datagrams';
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

/** How a session on datagrams assembles its groups; one per player, shared by its sessions. */
export interface LiveDatagramSetup {
  /** Give a group up this long after a newer group began, ms (params.ts liveGiveUpMs). */
  keepMs: number;
  /** Counted over the player's sessions (metrics). */
  counters: LiveDatagramCounters;
}

/**
 * Whether a session URL has the server send the live groups as datagrams: it carries `live.fec`
 * (the player's `fec`), exactly what the server decides by.
 */
export function wantsLiveDatagrams(url: string): boolean {
  try {
    return new URL(url).searchParams.has('live.fec');
  } catch {
    return false;
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
  /** With `live.fec` in the URL: turns the session's datagrams into group streams for `liveGroups`; else null. */
  readonly liveDatagrams: LiveDatagramAssembler | null;
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
    datagramSetup: LiveDatagramSetup | null = null,
  ) {
    this.telemetry = telemetry;
    this.closed = transport.closed.then(
      (info) => (this.closedReason = `WebTransport session closed${info.reason ? `: ${info.reason}` : ''} (code ${info.closeCode ?? 0})`),
      (error: unknown) => (this.closedReason = `WebTransport session failed: ${transportErrorMessage(error)}`),
    );
    void this.acceptUniStreams();
    this.liveDatagrams = wantsLiveDatagrams(url) ? this.startLiveDatagrams(datagramSetup) : null;
  }

  /**
   * Open a session; `certHash` is the SHA-256 of the server's DER certificate. `startup`
   * records when the session started and was ready, and its requests' first send and byte.
   * `pushes`: the responses `url` asks the server to push (its `vod.first`; vodFirstPushes);
   * `request` then takes them instead of sending those requests. `early`: the session
   * index.html opened to `url` before the modules loaded, used instead of a new one.
   * `liveDatagrams`: how to assemble groups if `url` asks for datagrams (`live.fec`).
   */
  static async connect(
    url: string,
    certHash: Uint8Array | null,
    telemetry = new TelemetryLog(),
    startup: StartupTimeline | null = null,
    pushes: readonly PushKey[] = [],
    early: EarlySession | null = null,
    liveDatagrams: LiveDatagramSetup | null = null,
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
    return new Session(url, transport, telemetry, startup, pushed, liveDatagrams);
  }

  /** Read the session's datagrams into an assembler whose NACKs go out as datagrams. */
  private startLiveDatagrams(setup: LiveDatagramSetup | null): LiveDatagramAssembler {
    let writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
    try {
      writer = this.transport.datagrams.writable.getWriter();
    } catch {
      writer = null; // no writable datagrams: the groups still come, only NACKs are lost
    }
    const assembler = new LiveDatagramAssembler({
      deliver: (stream) => this.liveGroups.deliver(stream),
      // A NACK that cannot be written is a lost NACK: the assembler NACKs again.
      sendDatagram: (bytes) => void writer?.write(bytes).catch(() => undefined),
      keepMs: setup?.keepMs ?? DEFAULT_LIVE_LATENCY_MS, // the default target latency (params.ts liveGiveUpMs)
      counters: setup?.counters ?? newLiveDatagramCounters(),
    });
    void this.readDatagrams(assembler);
    return assembler;
  }

  private async readDatagrams(assembler: LiveDatagramAssembler): Promise<void> {
    let reader: ReadableStreamDefaultReader<Uint8Array>;
    try {
      reader = (this.transport.datagrams.readable as ReadableStream<Uint8Array>).getReader();
    } catch (error) {
      assembler.close(`no datagrams on this session: ${transportErrorMessage(error)}`);
      return;
    }
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        assembler.receive(value); // never throws: malformed datagrams are counted
      }
    } catch {
      // The session closed; `closedReason` says why.
    } finally {
      reader.releaseLock();
      assembler.close(this.closedReason ?? 'the session stopped delivering datagrams');
    }
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

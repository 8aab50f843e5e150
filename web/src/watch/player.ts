import { MediaBuffer } from '../media/buffer';
import { CmafChunkParser } from '../media/chunks';
import { mimeOfInit } from '../media/codec';
import type { Range } from '../media/ranges';
import type { SegmentRecord } from '../metrics/types';
import type { ViewerPlayer } from './viewer';
import { defaultStartRendition, type PlayerParams } from '../params';
import type { Session } from '../transport/session';
import type { Response } from '../transport/response';
import { ThroughputEstimator, chooseRendition, type AbrDecision } from './abr';
import { parseManifest, segmentCount, type Manifest } from './manifest';
import { describeLadder, selectFixedRendition } from './rendition';

const POLL_MS = 50;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface TimelineEntry {
  start: number;
  end: number;
  rendition: number;
  bitrateBps: number;
}

/** What the player needs of the media buffer (MediaBuffer; a fake in tests). */
export interface BufferLike {
  append(data: Uint8Array<ArrayBuffer>, mime?: string): Promise<void>;
  ranges(): Range[];
  bufferAhead(): number;
  endOfStream(): Promise<void>;
}

export interface PlayerDeps {
  /** Called first thing: start what needs no manifest (attaching a MediaSource). */
  prepare?(): void;
  openBuffer(mime: string): Promise<BufferLike>;
  isTypeSupported(mime: string): boolean;
  sleep(ms: number): Promise<void>;
}

/** The <video> element as the player sees it. */
export interface PlayerVideo {
  currentTime: number;
}

/** `opened`: called when the MediaSource is open (startup phases). */
export function browserDeps(video: HTMLVideoElement, opened?: () => void): PlayerDeps {
  let attached: Promise<MediaSource> | null = null;
  const attach = (): Promise<MediaSource> =>
    (attached ??= MediaBuffer.attach(video).then((mediaSource) => {
      opened?.();
      return mediaSource;
    }));
  return {
    prepare: () => void attach().catch(() => undefined), // openBuffer reports the failure
    openBuffer: async (mime) => MediaBuffer.open(video, mime, await attach()),
    isTypeSupported: (mime) => typeof MediaSource !== 'undefined' && MediaSource.isTypeSupported(mime),
    sleep,
  };
}

export interface PlayerHooks {
  /** Human-readable progress for the page. */
  status(text: string): void;
  /** The first chunk of media is in the buffer (autoplay starts here). */
  firstMedia(): void;
  /** A startup step is done (metrics().startupPhases). */
  step?(phase: 'initAppendedMs' | 'firstChunkAppendedMs'): void;
}

type SessionLike = Pick<Session, 'request'>;

/** Playback started before the manifest (Player.startBeforeManifest). */
interface EarlyStart {
  buffer: BufferLike;
  /** The first chunk is appended and playback was started. */
  playing: boolean;
  /** Appending the rest of the first segment until interrupted. */
  appending: Promise<void>;
}

/**
 * One SEGMENT request whose body is cut into CMAF chunks as it arrives (CmafChunkParser).
 * The stream is read at once, even while an earlier segment is still being appended
 * (prefetch), so QUIC flow control never holds the server back; the chunks wait here.
 */
export class SegmentDownload {
  readonly response: Promise<Response>;
  private readonly parser = new CmafChunkParser();
  private readonly ready: Uint8Array<ArrayBuffer>[] = [];
  private done = false;
  private failure: { error: unknown } | null = null;
  private wake: (() => void) | null = null;

  constructor(session: SessionLike, readonly rendition: number, readonly index: number) {
    this.response = session.request('SEGMENT', rendition, index, (piece) => {
      try {
        this.ready.push(...this.parser.push(piece));
      } catch (error) {
        this.failure ??= { error };
      }
      this.notify();
    });
    this.response.then(
      () => {
        try {
          const last = this.failure === null ? this.parser.end() : null;
          if (last !== null) this.ready.push(last);
        } catch (error) {
          this.failure ??= { error };
        }
        this.done = true;
        this.notify();
      },
      (error: unknown) => {
        this.failure ??= { error };
        this.done = true;
        this.notify();
      },
    );
  }

  private interrupted = false;

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** Make a `next()` waiting for a chunk (or the next call) return 'interrupted' at once. */
  interrupt(): void {
    this.interrupted = true;
    this.notify();
  }

  /**
   * The chunks so far, joined into one append (fewer SourceBuffer updates when several
   * arrived together), as soon as there is one; null once the body is complete;
   * 'interrupted' after `interrupt()` (nothing taken).
   */
  async next(): Promise<Uint8Array<ArrayBuffer> | null | 'interrupted'> {
    for (;;) {
      if (this.failure !== null) throw this.failure.error instanceof Error ? this.failure.error : new Error(String(this.failure.error));
      if (this.interrupted) {
        this.interrupted = false;
        return 'interrupted';
      }
      if (this.ready.length > 0) return joinChunks(this.ready.splice(0));
      if (this.done) return null;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

function joinChunks(chunks: Uint8Array<ArrayBuffer>[]): Uint8Array<ArrayBuffer> {
  if (chunks.length === 1) return chunks[0] as Uint8Array<ArrayBuffer>;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * The VOD player loop: manifest → rendition choice → keep the buffer ahead of the playhead
 * up to the buffer target, one segment request at a time → endOfStream(). Each segment is
 * appended chunk by chunk as it arrives, and playback starts on the first chunk. With
 * `startRendition=lowest` the first segment and its init segment are requested together
 * with the manifest (rendition 0 is the lowest), so startup waits for no manifest round trip.
 */
export class Player implements ViewerPlayer {
  manifest: Manifest | null = null;
  buffer: BufferLike | null = null;
  readonly segments: SegmentRecord[] = [];
  /** All segments appended and endOfStream() called. */
  eos = false;
  lastDecision: AbrDecision | null = null;
  private readonly throughput = new ThroughputEstimator();
  private timeline: TimelineEntry[] = [];
  private stopped = false;

  constructor(
    private readonly session: SessionLike,
    private readonly video: PlayerVideo,
    private readonly params: PlayerParams,
    private readonly hooks: PlayerHooks,
    private readonly deps: PlayerDeps,
  ) {}

  stop(): void {
    this.stopped = true;
  }

  bufferAhead(): number {
    return this.buffer?.bufferAhead() ?? 0;
  }

  /**
   * Media appended ahead of the playhead: end of the last appended segment − currentTime.
   * Drives requests (robust to a small gap at the start); stalls use the contiguous
   * buffered range instead (`bufferAhead`).
   */
  scheduledAhead(): number {
    const last = this.timeline[this.timeline.length - 1];
    return last ? Math.max(0, last.end - this.video.currentTime) : 0;
  }

  /** Rendition of the appended media at time `t` (the latest append wins). */
  renditionAt(t: number): { rendition: number; bitrateBps: number } | null {
    for (let i = this.timeline.length - 1; i >= 0; i--) {
      const e = this.timeline[i];
      if (e && t >= e.start - 1e-3 && t < e.end) return { rendition: e.rendition, bitrateBps: e.bitrateBps };
    }
    return null;
  }

  throughputEstimateBps(): number | null {
    return this.throughput.estimate();
  }

  async run(): Promise<void> {
    this.deps.prepare?.();
    const inits = new Map<number, Promise<Uint8Array<ArrayBuffer>>>();
    const initOf = (r: number): Promise<Uint8Array<ArrayBuffer>> => {
      let init = inits.get(r);
      if (!init) {
        init = this.session.request('INIT', r, 0).then((res) => res.body);
        init.catch(() => undefined); // awaited when needed; until then not unhandled
        inits.set(r, init);
      }
      return init;
    };
    // startRendition=lowest: the first segment and its init go out with the manifest, and
    // playback starts from them alone when the init segment names a codec MSE plays.
    let speculative: SegmentDownload | null = null;
    let early: Promise<EarlyStart | null> = Promise.resolve(null);
    const startLowest = (this.params.startRendition ?? defaultStartRendition(this.params.mode)) === 'lowest';
    if (startLowest) {
      const init = initOf(0);
      speculative = this.download(0, 0);
      early = this.startBeforeManifest(init, speculative);
      early.catch(() => undefined); // awaited below, after the manifest
    }
    // After the first segment's requests: the server sends that segment's first chunk first,
    // then the manifest, then the rest of the segment (shared/PROTOCOL.md, "Order of responses").
    this.hooks.status('requesting the manifest');
    const manifestResponse = this.session.request('MANIFEST');

    const response = await manifestResponse;
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder().decode(response.body));
    } catch {
      throw new Error('the manifest is not JSON');
    }
    const manifest = parseManifest(json);
    performance.mark('pccstream:manifest');
    this.manifest = manifest;
    const renditions = manifest.renditions;
    const supported = renditions.map((r) => this.deps.isTypeSupported(r.mime));
    if (!supported.some(Boolean)) {
      throw new Error(`MSE supports none of the renditions' types (${[...new Set(renditions.map((r) => r.mime))].join(', ')})`);
    }

    let fixed: number | null = null;
    if (this.params.mode === 'fixed') {
      const kbps = this.params.bitrateKbps ?? 0;
      fixed = selectFixedRendition(renditions, kbps);
      if (fixed === null) {
        throw new Error(`no rendition at or below ${kbps} kbit/s; the ladder is ${describeLadder(renditions)}`);
      }
      if (!supported[fixed]) throw new Error(`MSE does not support rendition ${renditions[fixed]?.id} (${renditions[fixed]?.mime})`);
    }
    // ABR chooses among the renditions MSE can play; `ladder[i]` is a manifest index.
    const ladder = renditions.map((_, i) => i).filter((i) => supported[i]);
    const ladderBitrates = ladder.map((i) => renditions[i]?.bitrate_bps ?? 0);
    if (fixed !== null) void initOf(fixed); // ready by the time the fixed rendition starts
    // Started before the manifest: rendition 0's init and first chunks are in the buffer;
    // the loop below takes over appending the rest of segment 0.
    const earlyStart = await early;
    if (earlyStart !== null) {
      speculative?.interrupt();
      await earlyStart.appending;
    }
    const started = earlyStart?.buffer ?? null;
    // Rendition 0 is not playable here: the speculative requests were for nothing.
    if (speculative !== null && started === null && ladder[0] !== 0) speculative = null;
    const lowest = started !== null ? 0 : (ladder[0] ?? 0);

    const count = segmentCount(manifest);
    const first = renditions[startLowest ? lowest : (fixed ?? lowest)];
    if (!first) throw new Error('no rendition');
    this.buffer = started ?? (await this.deps.openBuffer(first.mime));
    const buffer = this.buffer;
    let appendedInit: number | null = started !== null ? 0 : null;
    let previous: number | null = null;

    // prefetch: the next segment's request, issued while the current one downloads.
    let prefetched: SegmentDownload | null = speculative;

    for (let index = 0; index < count; index++) {
      // Keep the buffer ahead of the playhead up to the target.
      while (!this.stopped && this.scheduledAhead() >= this.params.bufferS) await this.deps.sleep(POLL_MS);
      if (this.stopped) return;
      const bufferAtRequestS = this.scheduledAhead();

      let r: number;
      if (index === 0 && startLowest) {
        r = lowest;
      } else if (fixed !== null) {
        r = fixed;
      } else {
        const decision = chooseRendition({
          bitratesBps: ladderBitrates,
          bufferS: bufferAtRequestS,
          throughputBps: this.throughput.estimate(),
          previous: previous === null ? null : Math.max(0, ladder.indexOf(previous)),
          bufferTargetS: this.params.bufferS,
          segmentSeconds: manifest.segment_seconds,
        });
        this.lastDecision = decision;
        r = ladder[decision.index] ?? 0;
      }
      const rendition = renditions[r];
      const segment = rendition?.segments[index];
      if (!rendition || !segment) throw new Error(`rendition ${r} has no segment ${index}`);

      // The segment's request goes out before its init segment is awaited: no round trip
      // between them.
      this.hooks.status(`requesting segment ${index + 1}/${count} of ${rendition.id}`);
      const download = prefetched?.index === index && prefetched.rendition === r ? prefetched : this.download(r, index);
      prefetched = null;
      if (this.params.prefetch && fixed !== null && index + 1 < count) prefetched = this.download(fixed, index + 1);
      if (appendedInit !== r) {
        await buffer.append(await initOf(r), rendition.mime);
        appendedInit = r;
        this.hooks.step?.('initAppendedMs');
      }

      const onTimeline = (): void =>
        void this.timeline.push({
          start: segment.start_s,
          end: segment.start_s + segment.duration_s,
          rendition: r,
          bitrateBps: rendition.bitrate_bps,
        });
      // Started before the manifest: its first chunk is already appended and playing.
      let firstChunk = !(index === 0 && earlyStart?.playing === true);
      if (!firstChunk) onTimeline();
      for (let chunk = await download.next(); chunk !== null; chunk = await download.next()) {
        if (chunk === 'interrupted') continue;
        await buffer.append(chunk);
        if (!firstChunk) continue;
        firstChunk = false;
        onTimeline();
        if (index === 0) this.startPlayback(buffer);
      }
      const res = await download.response;
      this.segments.push({
        index,
        rendition: r,
        renditionId: rendition.id,
        bitrateKbps: rendition.bitrate_bps / 1000,
        bytes: res.timing.bytes,
        downloadMs: res.timing.downloadMs,
        throughputKbps: res.timing.throughputKbps,
        ttfbMs: res.timing.ttfbMs,
        requestedAtMs: res.timing.startMs,
        bufferAtRequestS,
      });
      this.throughput.add(res.timing.throughputKbps * 1000);
      previous = r;
      const horizon = this.video.currentTime - 60;
      if (this.timeline.length > 64) this.timeline = this.timeline.filter((e) => e.end >= horizon);
    }
    await buffer.endOfStream();
    this.eos = true;
    this.hooks.status(`all ${count} segments delivered`);
  }

  private download(rendition: number, index: number): SegmentDownload {
    const download = new SegmentDownload(this.session, rendition, index);
    // Awaited when its turn comes; until then a failure must not surface as unhandled.
    download.response.catch(() => undefined);
    return download;
  }

  /**
   * startRendition=lowest: open the SourceBuffer with the codec the init segment names, append
   * it and the first chunk, and start playing, all without the manifest (which takes its own
   * transfer time on a slow link); then keep appending chunks of the first segment
   * (`appending`) until the download is interrupted (the manifest is in) or complete. Null when
   * the init segment names no codec MSE plays: the player then starts once the manifest is in.
   */
  private async startBeforeManifest(init: Promise<Uint8Array<ArrayBuffer>>, download: SegmentDownload): Promise<EarlyStart | null> {
    const data = await init;
    const mime = mimeOfInit(data);
    if (mime === null || !this.deps.isTypeSupported(mime)) return null;
    const buffer = await this.deps.openBuffer(mime);
    await buffer.append(data, mime);
    this.hooks.step?.('initAppendedMs');
    const first = await download.next();
    if (first === null || first === 'interrupted') return { buffer, playing: false, appending: Promise.resolve() };
    await buffer.append(first);
    this.startPlayback(buffer);
    const appending = (async (): Promise<void> => {
      for (;;) {
        const chunk = await download.next();
        if (chunk === null || chunk === 'interrupted') return;
        await buffer.append(chunk);
      }
    })();
    appending.catch(() => undefined); // awaited once the manifest is in
    return { buffer, playing: true, appending };
  }

  /** The first chunk is in: start where the media starts, and let the page press play. */
  private startPlayback(buffer: BufferLike): void {
    // A stream whose first frame is slightly after 0 (composition offset): start there.
    const r0 = buffer.ranges()[0];
    const t = this.video.currentTime;
    if (r0 && t < r0.start - 1e-3 && r0.start - t < 1) this.video.currentTime = r0.start;
    performance.mark('pccstream:first-chunk');
    this.hooks.step?.('firstChunkAppendedMs');
    this.hooks.firstMedia();
  }
}

import { MediaBuffer } from '../media/buffer';
import type { Range } from '../media/ranges';
import type { SegmentRecord } from '../metrics/types';
import type { ViewerPlayer } from './viewer';
import type { PlayerParams } from '../params';
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
  openBuffer(mime: string): Promise<BufferLike>;
  isTypeSupported(mime: string): boolean;
  sleep(ms: number): Promise<void>;
}

/** The <video> element as the player sees it. */
export interface PlayerVideo {
  currentTime: number;
}

export function browserDeps(video: HTMLVideoElement): PlayerDeps {
  return {
    openBuffer: (mime) => MediaBuffer.open(video, mime),
    isTypeSupported: (mime) => typeof MediaSource !== 'undefined' && MediaSource.isTypeSupported(mime),
    sleep,
  };
}

export interface PlayerHooks {
  /** Human-readable progress for the page. */
  status(text: string): void;
  /** The first media segment is in the buffer (autoplay starts here at the latest). */
  firstMedia(): void;
}

/**
 * The VOD player loop: manifest → rendition choice → keep the buffer ahead of the playhead
 * up to the buffer target, one segment request at a time → endOfStream().
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
    private readonly session: Pick<Session, 'request'>,
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
    this.hooks.status('requesting the manifest');
    const response = await this.session.request('MANIFEST');
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

    const count = segmentCount(manifest);
    const first = renditions[fixed ?? ladder[0] ?? 0];
    if (!first) throw new Error('no rendition');
    this.buffer = await this.deps.openBuffer(first.mime);
    const buffer = this.buffer;
    const inits = new Map<number, Uint8Array<ArrayBuffer>>();
    let initOf: number | null = null;
    let previous: number | null = null;

    // prefetch: the next segment's request, issued while the current one downloads.
    let prefetched: { index: number; response: Promise<Response> } | null = null;

    for (let index = 0; index < count; index++) {
      // Keep the buffer ahead of the playhead up to the target.
      while (!this.stopped && this.scheduledAhead() >= this.params.bufferS) await this.deps.sleep(POLL_MS);
      if (this.stopped) return;
      const bufferAtRequestS = this.scheduledAhead();

      let r: number;
      if (fixed !== null) {
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

      if (initOf !== r) {
        let init = inits.get(r);
        if (!init) {
          this.hooks.status(`requesting init segment of ${rendition.id}`);
          init = (await this.session.request('INIT', r, 0)).body;
          inits.set(r, init);
        }
        await buffer.append(init, rendition.mime);
        initOf = r;
      }

      this.hooks.status(`requesting segment ${index + 1}/${count} of ${rendition.id}`);
      const pending = prefetched?.index === index ? prefetched.response : this.session.request('SEGMENT', r, index);
      prefetched = null;
      if (this.params.prefetch && fixed !== null && index + 1 < count) {
        const response = this.session.request('SEGMENT', fixed, index + 1);
        // Awaited in the next iteration; until then a failure must not surface as unhandled.
        response.catch(() => undefined);
        prefetched = { index: index + 1, response };
      }
      const res = await pending;
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
      await buffer.append(res.body);
      previous = r;
      this.timeline.push({
        start: segment.start_s,
        end: segment.start_s + segment.duration_s,
        rendition: r,
        bitrateBps: rendition.bitrate_bps,
      });
      const horizon = this.video.currentTime - 60;
      if (this.timeline.length > 64) this.timeline = this.timeline.filter((e) => e.end >= horizon);
      if (index === 0) {
        // A stream whose first frame is slightly after 0 (composition offset): start there.
        const r0 = buffer.ranges()[0];
        const t = this.video.currentTime;
        if (r0 && t < r0.start - 1e-3 && r0.start - t < 1) this.video.currentTime = r0.start;
        this.hooks.firstMedia();
      }
    }
    await buffer.endOfStream();
    this.eos = true;
    this.hooks.status(`all ${count} segments delivered`);
  }
}

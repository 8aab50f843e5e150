/**
 * The live player (mode=live, shared/PROTOCOL.md "Live"): LIVE_INFO → rendition → LIVE_INIT →
 * SUBSCRIBE at the live edge; then every LIVE_GROUP stream is parsed as it arrives, its chunks
 * appended in order (GroupScheduler decides which group), and a 50 ms control loop holds the
 * playhead `latency` behind the live edge (live-control.ts): start, catch-up / slow-down by
 * playback rate, skips forward and jumps over the gaps that dropped groups leave.
 */

import { errorMessage, streamErrorCode } from '../errors';
import type { CaptureClock, LatencySnapshot } from '../latency/latency';
import { MediaBuffer } from '../media/buffer';
import { bufferAhead, type Range } from '../media/ranges';
import type { LiveMetrics } from '../metrics/types';
import type { ViewerPlayer } from './viewer';
import type { PlayerParams } from '../params';
import {
  LIVE_EDGE,
  LIVE_SUPERSEDED,
  LiveGroupParser,
  groupStartSeconds,
  parseLiveInfo,
  parseSubscribe,
  type KindName,
  type LiveInfo,
} from '../protocol';
import type { Response } from '../transport/response';
import type { LiveGroupHandler, LiveGroupStream } from '../transport/unistreams';
import { LIVE_CONTROL, control, startPosition, type RateMode } from './live-control';
import { GroupScheduler } from './live-groups';
import { selectLiveRendition } from './live-rendition';
import type { BufferLike, PlayerHooks } from './player';

/** Control loop period. */
export const LIVE_TICK_MS = 50;
/** Played media kept behind the playhead (older media is removed from the SourceBuffer). */
export const LIVE_KEEP_BEHIND_S = 3;
/** How often old media is removed. */
const EVICT_EVERY_MS = 1000;

export interface LiveBuffer extends BufferLike {
  /** Remove media more than `keepBehindS` behind the playhead (MediaBuffer.evict). */
  evict?(keepBehindS: number): Promise<boolean>;
}

export interface LiveDeps {
  openBuffer(mime: string): Promise<LiveBuffer>;
  isTypeSupported(mime: string): boolean;
  sleep(ms: number): Promise<void>;
  /** Wall clock, ms since the Unix epoch (Date.now): the live edge is computed from it. */
  now(): number;
}

/** The <video> element as the live player sees it. */
export interface LiveVideo {
  currentTime: number;
  playbackRate: number;
}

export interface LiveSession {
  request(kind: KindName, rendition?: number, segment?: number): Promise<Response>;
  liveGroups: { setHandler(handler: LiveGroupHandler | null): void };
}

export interface LiveHooks extends PlayerHooks {
  /** LIVE_INFO arrived: the capture clock of the burned-in frame codes is known. */
  liveInfo?(info: LiveInfo, clock: CaptureClock): void;
}

/** The capture clock of a live channel's frame codes (src/latency). */
export function liveCaptureClock(info: LiveInfo): CaptureClock {
  return { epochMs: info.epoch_us / 1000, unitMs: (1000 * info.fps_den) / info.fps_num, periodCodes: info.loop_frames, codesPerFrame: 1 };
}

function describe(error: unknown): string {
  return streamErrorCode(error) === LIVE_SUPERSEDED ? 'superseded' : errorMessage(error);
}

export class LivePlayer implements ViewerPlayer {
  readonly mode = 'live';
  info: LiveInfo | null = null;
  rendition: number | null = null;
  buffer: LiveBuffer | null = null;
  /** A live stream never ends. */
  readonly eos = false;
  /** Playback started (the playhead was put at its start position). */
  started = false;
  /** Forward seeks by the player (skips and gap jumps). */
  seeks = 0;
  /** LIVE_GROUP streams whose header arrived. */
  groupsReceived = 0;
  /** The rate mode of the last control step. */
  rateMode: RateMode = 'hold';
  private scheduler: GroupScheduler | null = null;
  private readonly readers = new Map<number, ReadableStreamDefaultReader<Uint8Array>>();
  private stopped = false;
  private pumping = false;
  private fatal: unknown = null;
  private lastEvictMs = -Infinity;
  private readonly targetS: number;

  constructor(
    private readonly session: LiveSession,
    private readonly video: LiveVideo,
    private readonly params: PlayerParams,
    private readonly hooks: LiveHooks,
    private readonly deps: LiveDeps,
  ) {
    this.targetS = (params.live?.targetLatencyMs ?? 1000) / 1000;
  }

  stop(): void {
    this.stopped = true;
    this.session.liveGroups.setHandler(null);
    for (const reader of this.readers.values()) void reader.cancel('player stopped').catch(() => undefined);
    this.readers.clear();
  }

  bufferAhead(): number {
    return this.buffer?.bufferAhead() ?? 0;
  }

  renditionAt(_t: number): { rendition: number; bitrateBps: number } | null {
    const r = this.rendition === null ? undefined : this.info?.renditions[this.rendition];
    return r && this.rendition !== null ? { rendition: this.rendition, bitrateBps: r.bitrate_bps } : null;
  }

  /** Media time of the live edge now (s): the capture time of a frame captured now. */
  liveEdge(): number | null {
    return this.info === null ? null : (this.deps.now() - this.info.epoch_us / 1000) / 1000;
  }

  /** The live metrics, from this player, the frame-code tracker and the video's rate. */
  metrics(latency: LatencySnapshot | null, playbackRate: number): LiveMetrics {
    const edge = this.liveEdge();
    const stats = this.scheduler?.stats;
    return {
      mode: 'live',
      targetLatencyMs: this.targetS * 1000,
      latencyP50Ms: latency?.latencyP50Ms ?? null,
      latencyP95Ms: latency?.latencyP95Ms ?? null,
      latencyMeanMs: latency?.latencyMeanMs ?? null,
      latencyMaxMs: latency?.latencyMaxMs ?? null,
      latencyLastMs: latency?.latencyLastMs ?? null,
      mediaLatencyMs: edge !== null && this.started ? (edge - this.video.currentTime) * 1000 : null,
      framesSkipped: latency?.framesSkipped ?? null,
      framesShown: latency?.framesShown ?? null,
      framesUnreadable: latency?.framesUnreadable ?? null,
      groupsReceived: this.groupsReceived,
      groupsDropped: stats?.dropped ?? 0,
      liveSeeks: this.seeks,
      playbackRate,
    };
  }

  async run(): Promise<void> {
    this.hooks.status('requesting the live channel info');
    const info = parseLiveInfo((await this.session.request('LIVE_INFO')).body);
    this.info = info;
    const choice = selectLiveRendition(
      info.renditions,
      { rendition: this.params.live?.rendition ?? null, bitrateKbps: this.params.bitrateKbps },
      (i) => this.deps.isTypeSupported(info.renditions[i]?.mime ?? ''),
    );
    if ('error' in choice) throw new Error(choice.error);
    const r = choice.index;
    const rendition = info.renditions[r];
    if (!rendition) throw new Error(`no live rendition ${r}`);
    this.rendition = r;
    this.hooks.liveInfo?.(info, liveCaptureClock(info));

    this.hooks.status(`requesting the live init segment of ${rendition.id}`);
    const init = (await this.session.request('LIVE_INIT', r, 0)).body;
    this.buffer = await this.deps.openBuffer(rendition.mime);
    await this.buffer.append(init, rendition.mime);

    const frameS = info.fps_den / info.fps_num;
    this.scheduler = new GroupScheduler((g) => groupStartSeconds(info, g), frameS);
    this.scheduler.onAbandon = (group) => {
      const reader = this.readers.get(group);
      this.readers.delete(group);
      void reader?.cancel('dropped').catch(() => undefined);
    };
    this.session.liveGroups.setHandler((stream) => void this.readGroup(stream));

    this.hooks.status(`subscribing to ${rendition.id} at the live edge`);
    const sub = parseSubscribe((await this.session.request('SUBSCRIBE', r, LIVE_EDGE)).body);
    if (sub.rendition !== r) throw new Error(`SUBSCRIBE answered rendition ${sub.rendition}, asked for ${r}`);
    this.hooks.status(`live from group ${sub.start_group} (${rendition.id}), target latency ${this.targetS * 1000} ms`);

    while (!this.stopped) {
      if (this.fatal !== null) throw this.fatal;
      await this.tick();
      await this.deps.sleep(LIVE_TICK_MS);
    }
  }

  /** Read one LIVE_GROUP stream to its end, feeding the scheduler as chunks complete. */
  private async readGroup(stream: LiveGroupStream): Promise<void> {
    const scheduler = this.scheduler;
    if (scheduler === null || this.stopped) {
      await stream.cancel('not playing').catch(() => undefined);
      return;
    }
    const reader = stream.getReader();
    const parser = new LiveGroupParser();
    let group: number | null = null;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const chunks = parser.push(value);
        if (group === null && parser.header !== null) {
          const header = parser.header;
          this.groupsReceived += 1;
          if (header.rendition !== this.rendition || !scheduler.addGroup(header.group)) {
            await reader.cancel('not wanted').catch(() => undefined);
            return;
          }
          group = header.group;
          this.readers.set(group, reader);
        }
        if (group !== null && chunks.length > 0) {
          for (const chunk of chunks) scheduler.addChunk(group, chunk);
          void this.pump();
        }
      }
      parser.end();
      if (group !== null) scheduler.endGroup(group);
    } catch (error) {
      if (group !== null) scheduler.failGroup(group, describe(error));
    } finally {
      if (group !== null && this.readers.get(group) === reader) this.readers.delete(group);
      reader.releaseLock();
    }
    void this.pump();
  }

  /** Append every chunk the scheduler releases, one at a time, in order. */
  private async pump(): Promise<void> {
    const scheduler = this.scheduler;
    const buffer = this.buffer;
    if (this.pumping || scheduler === null || buffer === null) return;
    this.pumping = true;
    const edge = this.liveEdge();
    if (edge !== null) scheduler.targetPositionS = edge - this.targetS;
    try {
      for (let item = scheduler.take(); item !== null && !this.stopped; item = scheduler.take()) {
        await buffer.append(item.chunk.data);
      }
    } catch (error) {
      this.fatal ??= error;
    } finally {
      this.pumping = false;
    }
  }

  /** One control step: drop what would be too late, start / seek / set the rate, evict. */
  async tick(): Promise<void> {
    const scheduler = this.scheduler;
    const buffer = this.buffer;
    const edge = this.liveEdge();
    if (scheduler === null || buffer === null || edge === null) return;

    scheduler.targetPositionS = edge - this.targetS;
    // Data the feed waits for that would be shown more than target + SKIP_S late is given up
    // when a newer group's start is in (the control loop then seeks over the gap).
    const need = scheduler.nextNeededS();
    if (need !== null && edge - need > this.targetS + LIVE_CONTROL.SKIP_S && scheduler.skipForward()) void this.pump();

    const ranges: Range[] = buffer.ranges();
    const t = this.video.currentTime;
    // Stalled (or about to) on a group that is starved while a newer group's start is in: the
    // rest of it would only arrive after newer data, too late. The server, serving the newest
    // group first, will supersede it anyway; give it up now.
    if (
      this.started &&
      bufferAhead(ranges, t) < LIVE_CONTROL.GAP_AHEAD_S &&
      !ranges.some((r) => r.start > t + 1e-3) &&
      scheduler.skipForward()
    ) {
      void this.pump();
    }
    if (!this.started) {
      const at = startPosition(edge, ranges, this.targetS);
      if (at === null) return;
      this.video.currentTime = at;
      this.started = true;
      this.hooks.firstMedia();
      return;
    }

    const d = control({ liveEdge: edge, currentTime: t, ranges, targetS: this.targetS, mode: this.rateMode });
    this.rateMode = d.mode;
    if (d.seekTo !== null) {
      this.video.currentTime = d.seekTo;
      this.seeks += 1;
    }
    if (Math.abs(this.video.playbackRate - d.rate) > 1e-6) this.video.playbackRate = d.rate;

    const nowMs = this.deps.now();
    if (buffer.evict && nowMs - this.lastEvictMs >= EVICT_EVERY_MS) {
      this.lastEvictMs = nowMs;
      await buffer.evict(LIVE_KEEP_BEHIND_S);
    }
  }
}

/** The browser's MSE buffer and clocks for the live player. */
export function liveBrowserDeps(video: HTMLVideoElement): LiveDeps {
  return {
    openBuffer: (mime) => MediaBuffer.open(video, mime),
    isTypeSupported: (mime) => typeof MediaSource !== 'undefined' && MediaSource.isTypeSupported(mime),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    now: () => Date.now(),
  };
}

/** The live fields of the metrics in a VOD mode: nulls. */
export function vodLiveMetrics(mode: 'fixed' | 'abr' | 'live', playbackRate: number): LiveMetrics {
  return {
    mode,
    targetLatencyMs: null,
    latencyP50Ms: null,
    latencyP95Ms: null,
    latencyMeanMs: null,
    latencyMaxMs: null,
    latencyLastMs: null,
    mediaLatencyMs: null,
    framesSkipped: null,
    framesShown: null,
    framesUnreadable: null,
    groupsReceived: null,
    groupsDropped: null,
    liveSeeks: null,
    playbackRate,
  };
}

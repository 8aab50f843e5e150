/**
 * The live player (mode=live, shared/PROTOCOL.md "Live"): LIVE_INFO → rendition → LIVE_INIT →
 * SUBSCRIBE at the live edge; then every LIVE_GROUP stream is parsed as it arrives, its chunks
 * appended in order (GroupScheduler decides which group), and a 50 ms control loop keeps the
 * playhead at the playout delay behind the live edge (live-control.ts): as early as the
 * measured frame delays allow (live-playout.ts), at most the target `latency`; start,
 * catch-up / slow-down by playback rate, skips forward and jumps over the gaps that dropped
 * groups leave.
 */

import { AUTO_FEC_MAX_K } from '../contracts';
import { errorMessage, streamErrorCode } from '../errors';
import type { CaptureClock, LatencySnapshot } from '../latency/latency';
import { MediaBuffer } from '../media/buffer';
import { bufferAhead, type Range } from '../media/ranges';
import type { BitrateSwitch, LiveMetrics } from '../metrics/types';
import type { ViewerPlayer } from './viewer';
import { sessionLiveFec, type PlayerParams } from '../params';
import {
  LIVE_EDGE,
  LIVE_SUPERSEDED,
  LiveGroupParser,
  groupStartSeconds,
  parseLiveInfo,
  parseSubscribe,
  wireFactor,
  type KindName,
  type LiveInfo,
} from '../protocol';
import type { LiveDatagramCounters } from '../transport/live-datagrams';
import type { Response } from '../transport/response';
import type { LiveGroupHandler, LiveGroupStream } from '../transport/unistreams';
import { LIVE_CONTROL, control, startPosition, type RateMode } from './live-control';
import { KEY_SAMPLING, LiveAbr, type AbrDecision, type AbrTrace, type AbrTraceEvent } from './live-abr';
import { PlayoutDelay } from './live-playout';
import { GroupScheduler } from './live-groups';
import { selectLiveRendition } from './live-rendition';
import { selectFixedRendition } from './rendition';
import type { BufferLike, PlayerHooks } from './player';

/**
 * With live ABR, skip when the latency is this much over target (instead of
 * LIVE_CONTROL.SKIP_S): after a step down the new rendition's groups arrive in time, so
 * catching up at ≤ 1.1× over the backlog the old one left would hold the latency up for
 * seconds; skipping to them brings it back at once.
 */
export const LIVE_ABR_SKIP_S = 0.25;
/** Control loop period. */
export const LIVE_TICK_MS = 50;
/** Played media kept behind the playhead (older media is removed from the SourceBuffer). */
export const LIVE_KEEP_BEHIND_S = 3;
/** Live ABR trace events kept (about 9 minutes of one-frame chunks at 30 fps). */
const TRACE_MAX = 20_000;
/** How often old media is removed. */
const EVICT_EVERY_MS = 1000;

export interface LiveBuffer extends BufferLike {
  /** Remove media more than `keepBehindS` behind the playhead (MediaBuffer.evict). */
  evict?(keepBehindS: number): Promise<boolean>;
  /** Remove media in a range (MediaBuffer.remove): a restarted channel's old timeline. */
  remove?(range: Range): Promise<void>;
}

export interface LiveDeps {
  openBuffer(mime: string): Promise<LiveBuffer>;
  isTypeSupported(mime: string): boolean;
  sleep(ms: number): Promise<void>;
  /** Wall clock, ms since the Unix epoch (Date.now): the live edge is computed from it. */
  now(): number;
  /** Page clock, ms (performance.now()): when ABR switches happened (default: `now`). */
  pageNow?(): number;
}

/** The <video> element as the live player sees it. */
export interface LiveVideo {
  currentTime: number;
  playbackRate: number;
}

export interface LiveSession {
  request(kind: KindName, rendition?: number, segment?: number): Promise<Response>;
  liveGroups: { setHandler(handler: LiveGroupHandler | null): void };
  /** With `live.fec` (groups as datagrams): the assembler's counters; absent or null on streams. */
  datagramCounters?(): LiveDatagramCounters | null;
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

/** `LivePlayer.startState()`: what the start decision sees. */
export interface LiveStartState {
  liveEdgeS: number | null;
  targetS: number;
  started: boolean;
  /** Since media was first buffered on this timeline (null: none yet). */
  waitedS: number | null;
  currentTime: number;
  ranges: Range[];
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
  /** When media was first buffered while waiting to start (deps.now(), ms). */
  private firstBufferedMs: number | null = null;
  /** Forward seeks by the player (skips and gap jumps). */
  seeks = 0;
  /** LIVE_GROUP streams whose header arrived. */
  groupsReceived = 0;
  /** The rate mode of the last control step. */
  rateMode: RateMode = 'hold';
  /** Live ABR (abr=1), else null: the rendition stays as chosen at the start. */
  abr: LiveAbr | null = null;
  /** Live ABR's switches, oldest first. */
  readonly switchLog: BitrateSwitch[] = [];
  /** What live ABR was told (the last TRACE_MAX events), for `liveAbrTrace()`. */
  private traceEvents: AbrTraceEvent[] = [];
  private traceHeader: Omit<AbrTrace, 'events'> | null = null;
  /** The rendition live ABR wants (subscribed once the SUBSCRIBE is answered). */
  private wanted: number | null = null;
  private subscribing = false;
  /** Init segments by rendition, fetched once each. */
  private readonly inits = new Map<number, Promise<Uint8Array<ArrayBuffer>>>();
  /** The rendition of each group, from its header; kept until the feed is past the group. */
  private readonly groupRendition = new Map<number, number>();
  /** Groups the player gave up: true after playback started (lost, for ABR), false before. */
  private readonly abandoned = new Map<number, boolean>();
  /** The rendition whose init segment was appended last. */
  private appendedRendition: number | null = null;
  /** Media time where each group fed to the buffer starts, and its rendition (ascending). */
  private played: Array<{ startS: number; rendition: number }> = [];
  private scheduler: GroupScheduler | null = null;
  private readonly readers = new Map<number, ReadableStreamDefaultReader<Uint8Array>>();
  private stopped = false;
  private pumping = false;
  private fatal: unknown = null;
  private lastEvictMs = -Infinity;
  private readonly targetS: number;
  /** The playout delay from the frames' measured delays (null before the subscription). */
  private playout: PlayoutDelay | null = null;

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

  /** The rendition of the group at media time t (the subscribed one before any is fed). */
  renditionAt(t: number): { rendition: number; bitrateBps: number } | null {
    let index = this.rendition;
    for (const p of this.played) {
      if (p.startS > t + 1e-6) break;
      index = p.rendition;
    }
    const r = index === null ? undefined : this.info?.renditions[index];
    return r && index !== null ? { rendition: index, bitrateBps: r.bitrate_bps } : null;
  }

  /** Media time of the live edge now (s): the capture time of a frame captured now. */
  liveEdge(): number | null {
    return this.info === null ? null : (this.deps.now() - this.info.epoch_us / 1000) / 1000;
  }

  /** The live metrics, from this player, the frame-code tracker and the video's rate. */
  metrics(latency: LatencySnapshot | null, playbackRate: number): LiveMetrics {
    const edge = this.liveEdge();
    const stats = this.scheduler?.stats;
    const datagrams = this.session.datagramCounters?.() ?? null;
    return {
      mode: 'live',
      targetLatencyMs: this.targetS * 1000,
      latencyP50Ms: latency?.latencyP50Ms ?? null,
      latencyP95Ms: latency?.latencyP95Ms ?? null,
      latencyMeanMs: latency?.latencyMeanMs ?? null,
      latencyMaxMs: latency?.latencyMaxMs ?? null,
      latencyLastMs: latency?.latencyLastMs ?? null,
      mediaLatencyMs: edge !== null && this.started ? (edge - this.video.currentTime) * 1000 : null,
      playoutDelayMs: this.playout === null ? null : this.playoutDelayS() * 1000,
      framesSkipped: latency?.framesSkipped ?? null,
      framesShown: latency?.framesShown ?? null,
      framesUnreadable: latency?.framesUnreadable ?? null,
      freezeCount: latency?.freezeCount ?? null,
      totalFreezesDurationS: latency ? latency.totalFreezesDurationMs / 1000 : null,
      groupsReceived: this.groupsReceived,
      groupsDropped: stats?.dropped ?? 0,
      fecRecovered: datagrams?.fecRecovered ?? null,
      nacksSent: datagrams?.nacksSent ?? null,
      fragmentsRetransmitted: datagrams?.fragmentsRetransmitted ?? null,
      fecGroupsGivenUp: datagrams?.fecGroupsGivenUp ?? null,
      fecGroupsSuperseded: datagrams?.fecGroupsSuperseded ?? null,
      liveSeeks: this.seeks,
      playbackRate,
      bitrateSwitchLog: this.abr === null ? null : this.switchLog.map((s) => ({ ...s })),
    };
  }

  async run(): Promise<void> {
    this.hooks.status('requesting the live channel info');
    const info = parseLiveInfo((await this.session.request('LIVE_INFO')).body);
    this.info = info;
    const supported = (i: number): boolean => this.deps.isTypeSupported(info.renditions[i]?.mime ?? '');
    let r: number;
    if (this.params.live?.abr) {
      this.abr = liveAbrFor(info, this.params.bitrateKbps, this.targetS, supported, sessionLiveFec(this.params.live));
      r = this.abr.rendition;
      this.traceHeader = { bitratesBps: info.renditions.map((x) => x.bitrate_bps), allowed: [...this.abr.ladder], initial: r, groupS: info.group_duration_us / 1e6, targetS: this.targetS, keySampling: KEY_SAMPLING, ...(this.abr.wireFactors ? { wireFactor: [...this.abr.wireFactors] } : {}) };
    } else {
      const choice = selectLiveRendition(info.renditions, { rendition: this.params.live?.rendition ?? null, bitrateKbps: this.params.bitrateKbps }, supported);
      if ('error' in choice) throw new Error(choice.error);
      r = choice.index;
    }
    const rendition = info.renditions[r];
    if (!rendition) throw new Error(`no live rendition ${r}`);
    this.rendition = r;
    this.wanted = r;
    this.hooks.liveInfo?.(info, liveCaptureClock(info));

    this.hooks.status(`requesting the live init segment of ${rendition.id}`);
    const init = await this.initFor(r);
    this.buffer = await this.deps.openBuffer(rendition.mime);
    await this.buffer.append(init, rendition.mime);
    this.appendedRendition = r;

    this.scheduler = this.newScheduler(info);
    this.session.liveGroups.setHandler((stream) => void this.readGroup(stream));

    this.hooks.status(`subscribing to ${rendition.id} at the live edge`);
    const sub = parseSubscribe((await this.session.request('SUBSCRIBE', r, LIVE_EDGE)).body);
    if (sub.rendition !== r) throw new Error(`SUBSCRIBE answered rendition ${sub.rendition}, asked for ${r}`);
    // The group in progress comes as a burst: its delays are the join's, not the path's.
    this.playout = new PlayoutDelay(this.targetS * 1000, this.captureMs(sub.start_group + 1, 0), this.params.live?.jitter, this.params.live?.transient);
    this.hooks.status(`live from group ${sub.start_group} (${rendition.id}), target latency ${this.targetS * 1000} ms${this.abr ? ', live ABR' : ''}`);
    this.subscribed = true;
    void this.resubscribe();

    while (!this.stopped) {
      if (this.fatal !== null) throw this.fatal;
      await this.tick();
      await this.deps.sleep(LIVE_TICK_MS);
    }
  }

  private subscribed = false;
  /** The session was replaced (live-reconnect.ts): SUBSCRIBE again even to the same rendition. */
  private mustResubscribe = false;

  private newScheduler(info: LiveInfo): GroupScheduler {
    const scheduler = new GroupScheduler((g) => groupStartSeconds(info, g), info.fps_den / info.fps_num);
    scheduler.onAbandon = (group) => {
      this.abandoned.set(group, this.started);
      const reader = this.readers.get(group);
      this.readers.delete(group);
      void reader?.cancel('dropped').catch(() => undefined);
    };
    return scheduler;
  }

  /** A new session after a lost one (live-reconnect.ts): SUBSCRIBE at the live edge again. */
  async resubscribeAtEdge(): Promise<void> {
    if (!this.subscribed || this.stopped) return;
    this.mustResubscribe = true;
    await this.resubscribe();
  }

  /**
   * The channel restarted (a new server run: new epoch, new media times; live-reconnect.ts):
   * drop the old timeline's groups, media and init segments and start again like at the start.
   */
  async restartTimeline(info: LiveInfo): Promise<void> {
    this.scheduler = this.newScheduler(info); // from here the old groups' chunks are not appended
    for (const reader of this.readers.values()) void reader.cancel('new timeline').catch(() => undefined);
    this.readers.clear();
    this.groupRendition.clear();
    this.abandoned.clear();
    this.inits.clear();
    // The old media goes before the start position is looked for on the new timeline.
    const buffer = this.buffer;
    if (buffer?.remove) for (const range of buffer.ranges()) await buffer.remove(range);
    this.played = [];
    this.appendedRendition = null;
    this.info = info;
    this.started = false;
    this.firstBufferedMs = null;
    // The old timeline's group numbers mean nothing on the new one; frames already captured
    // arrive as the join's burst, so measuring starts with the frames captured from now.
    if (this.playout !== null) {
      this.playout = new PlayoutDelay(this.targetS * 1000, this.deps.now(), this.params.live?.jitter, this.params.live?.transient);
    }
    this.hooks.liveInfo?.(info, liveCaptureClock(info));
  }

  /** The init segment of rendition r (fetched once). */
  private initFor(r: number): Promise<Uint8Array<ArrayBuffer>> {
    let init = this.inits.get(r);
    if (init === undefined) {
      init = this.session.request('LIVE_INIT', r, 0).then((response) => response.body);
      init.catch(() => this.inits.delete(r));
      this.inits.set(r, init);
    }
    return init;
  }

  /** Live ABR decided: record it and move the subscription (from the next group boundary). */
  private applyDecision(d: AbrDecision): void {
    const info = this.info;
    const from = this.wanted ?? this.rendition;
    if (info === null || from === null || d.rendition === from) return;
    const a = info.renditions[from];
    const b = info.renditions[d.rendition];
    if (!a || !b) return;
    const edge = this.liveEdge();
    this.switchLog.push({
      atMs: (this.deps.pageNow ?? this.deps.now)(),
      group: null,
      from: a.id,
      to: b.id,
      fromKbps: a.bitrate_bps / 1000,
      toKbps: b.bitrate_bps / 1000,
      reason: d.reason,
      throughputKbps: d.throughputKbps,
      queueDelayMs: d.queueDelayMs,
      latencyMs: edge !== null && this.started ? Math.round((edge - this.video.currentTime) * 1000) : null,
      bufferMs: Math.round(this.bufferAhead() * 1000),
    });
    this.wanted = d.rendition;
    // Larger keyframes are coming: the playout delay allows for them until they are measured.
    if (b.bitrate_bps > a.bitrate_bps) this.playout?.rewarm(a.bitrate_bps, b.bitrate_bps);
    else this.playout?.cancelSwitch();
    void this.initFor(d.rendition).catch(() => undefined); // ready before the group arrives
    void this.resubscribe();
  }

  /** SUBSCRIBE to the wanted rendition until the subscription matches it (one at a time). */
  private async resubscribe(): Promise<void> {
    if (this.subscribing || !this.subscribed) return;
    this.subscribing = true;
    try {
      while (!this.stopped && this.wanted !== null && (this.wanted !== this.rendition || this.mustResubscribe)) {
        this.mustResubscribe = false;
        const r = this.wanted;
        const sub = parseSubscribe((await this.session.request('SUBSCRIBE', r, LIVE_EDGE)).body);
        if (sub.rendition !== r) throw new Error(`SUBSCRIBE answered rendition ${sub.rendition}, asked for ${r}`);
        this.rendition = r;
        const entry = this.switchLog[this.switchLog.length - 1];
        if (entry && entry.group === null) entry.group = sub.start_group;
      }
    } catch (error) {
      if (!this.stopped) this.fatal ??= error;
    } finally {
      this.subscribing = false;
    }
  }

  /**
   * A group's stream ended (`delivered`: to its FIN): tell live ABR whether it completed or was
   * lost (reset by the server, failed, or given up after playback started), and apply its
   * decision. Groups given up before playback started are no evidence either way.
   */
  private groupEnded(group: number, delivered: boolean): void {
    const abandoned = this.abandoned.get(group);
    this.abandoned.delete(group);
    if (this.abr === null || this.stopped || abandoned === false) return;
    const edge = this.liveEdge();
    const state = { latencyS: edge !== null && this.started ? edge - this.video.currentTime : null, bufferS: this.bufferAhead() };
    const completed = delivered && abandoned === undefined;
    this.record({ type: 'end', group, completed, ...state, arrivalMs: this.deps.now() });
    const d = this.abr.onGroupEnd(group, completed, state);
    if (d !== null) this.applyDecision(d);
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
    let delivered = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const chunks = parser.push(value);
        if (group === null && parser.header !== null) {
          const header = parser.header;
          this.groupsReceived += 1;
          const known = this.info?.renditions[header.rendition] !== undefined;
          if (!known || !scheduler.addGroup(header.group)) {
            await reader.cancel('not wanted').catch(() => undefined);
            return;
          }
          group = header.group;
          this.groupRendition.set(group, header.rendition);
          this.readers.set(group, reader);
        }
        if (group !== null && chunks.length > 0) {
          const arrivalMs = this.deps.now();
          for (const chunk of chunks) {
            scheduler.addChunk(group, chunk);
            this.measureChunk(group, chunk.firstFrame + chunk.frameCount - 1, chunk.data.length, arrivalMs);
          }
          void this.pump();
        }
      }
      parser.end();
      if (group !== null) scheduler.endGroup(group);
      delivered = true;
    } catch (error) {
      if (group !== null) scheduler.failGroup(group, describe(error));
    } finally {
      if (group !== null && this.readers.get(group) === reader) this.readers.delete(group);
      reader.releaseLock();
    }
    if (group !== null) this.groupEnded(group, delivered);
    void this.pump();
  }

  /** Append every chunk the scheduler releases, one at a time, in order. */
  private async pump(): Promise<void> {
    const scheduler = this.scheduler;
    const buffer = this.buffer;
    if (this.pumping || scheduler === null || buffer === null) return;
    this.pumping = true;
    const edge = this.liveEdge();
    if (edge !== null) scheduler.targetPositionS = edge - this.playoutDelayS();
    try {
      // A restarted timeline replaces the scheduler: the old one's chunks are not appended.
      for (let item = scheduler.take(); item !== null && !this.stopped && scheduler === this.scheduler; item = scheduler.take()) {
        // A group's rendition is kept until the feed is past the group: its stream may end
        // long before its chunks are appended, and they need its init segment.
        for (const g of this.groupRendition.keys()) if (g < item.group) this.groupRendition.delete(g);
        const r = this.groupRendition.get(item.group) ?? this.appendedRendition;
        const rendition = r === null ? undefined : this.info?.renditions[r];
        if (r !== null && rendition && r !== this.appendedRendition) {
          // A rendition switch at this group's keyframe: its init segment first.
          const before = this.appendedRendition === null ? undefined : this.info?.renditions[this.appendedRendition];
          await buffer.append(await this.initFor(r), rendition.mime);
          this.appendedRendition = r;
          // The playout delay is measured on the new rendition's frames from here.
          if (before && rendition.bitrate_bps > before.bitrate_bps) this.playout?.rewarm(before.bitrate_bps, rendition.bitrate_bps);
        }
        if (item.chunk.firstFrame === 0 && r !== null && this.info !== null) this.notePlayed(groupStartSeconds(this.info, item.group), r);
        await buffer.append(item.chunk.data);
        if (this.info !== null) this.playout?.onFrame(item.group, this.captureMs(item.group, item.chunk.firstFrame), this.deps.now(), rendition?.bitrate_bps);
      }
    } catch (error) {
      this.fatal ??= error;
    } finally {
      this.pumping = false;
    }
  }

  private notePlayed(startS: number, rendition: number): void {
    const last = this.played[this.played.length - 1];
    if (last && last.rendition === rendition && last.startS <= startS) return;
    this.played.push({ startS, rendition });
    // Keep what the playhead may still be in (and one entry before it).
    const t = this.video.currentTime - LIVE_KEEP_BEHIND_S;
    while (this.played.length > 2 && (this.played[1] as { startS: number }).startS < t) this.played.shift();
  }

  /** Capture time of frame `frame` of group `group`, ms on the channel's clock (its media time). */
  private captureMs(group: number, frame: number): number {
    const info = this.info as LiveInfo;
    const frameMs = (1000 * info.fps_den) / info.fps_num;
    return info.epoch_us / 1000 + (group * info.frames_per_group + frame) * frameMs;
  }

  /** While live ABR's start-up runs, the playout delay allows for a switch from the rendition measured to the ladder's top. */
  private anticipateStartUp(): void {
    const abr = this.abr;
    const renditions = this.info?.renditions;
    const measuring = this.appendedRendition ?? this.rendition;
    if (abr === null || !renditions || measuring === null || !abr.startingUp) {
      this.playout?.anticipate();
      return;
    }
    const topBps = Math.max(...abr.ladder.map((i) => renditions[i]?.bitrate_bps ?? 0));
    this.playout?.anticipate(renditions[measuring]?.bitrate_bps, topBps);
  }

  /** The playout delay now, s (the target before the subscription). */
  private playoutDelayS(): number {
    return this.playout?.delayS(this.deps.now()) ?? this.targetS;
  }

  private measureChunk(group: number, lastFrameInGroup: number, bytes: number, arrivalMs: number): void {
    if (this.abr === null || this.info === null) return;
    const rendition = this.groupRendition.get(group);
    if (rendition === undefined) return;
    const captureMs = this.captureMs(group, lastFrameInGroup);
    const arrival = { group, rendition, bytes, captureMs, arrivalMs };
    this.record({ type: 'chunk', ...arrival });
    this.abr.onChunk(arrival);
  }

  private record(event: AbrTraceEvent): void {
    this.traceEvents.push(event);
    if (this.traceEvents.length > TRACE_MAX) this.traceEvents.splice(0, this.traceEvents.length - TRACE_MAX);
  }

  /** Live ABR's inputs so far (null without live ABR): a trace `replayTrace` reproduces. */
  abrTrace(): AbrTrace | null {
    return this.traceHeader === null ? null : { ...this.traceHeader, events: [...this.traceEvents] };
  }

  /** Where the start decision stands: the live edge, the target, what is buffered (media time, s). */
  startState(): LiveStartState {
    const now = this.deps.now();
    return {
      liveEdgeS: this.liveEdge(),
      targetS: this.targetS,
      started: this.started,
      waitedS: this.firstBufferedMs === null ? null : (now - this.firstBufferedMs) / 1000,
      currentTime: this.video.currentTime,
      ranges: this.buffer?.ranges() ?? [],
    };
  }

  /** One control step: drop what would be too late, start / seek / set the rate, evict. */
  async tick(): Promise<void> {
    const scheduler = this.scheduler;
    const buffer = this.buffer;
    const edge = this.liveEdge();
    if (scheduler === null || buffer === null || edge === null) return;

    // Live ABR's start-up picks a rendition from the first groups, up to the ladder's top: the
    // playout delay allows for its switch from the frames measured so far.
    this.anticipateStartUp();
    const playoutS = this.playoutDelayS();
    scheduler.targetPositionS = edge - playoutS;
    // Data the feed waits for that would be shown more than target + SKIP_S late is given up
    // when a newer group's start is in (the control loop then seeks over the gap).
    const skipS = this.abr !== null ? LIVE_ABR_SKIP_S : LIVE_CONTROL.SKIP_S;
    const need = scheduler.nextNeededS();
    if (need !== null && edge - need > this.targetS + skipS && scheduler.skipForward()) void this.pump();

    const ranges: Range[] = buffer.ranges();
    const t = this.video.currentTime;
    // Stalled (or about to) on a group that is starved while a newer group's start is in: the
    // rest of it would only arrive after newer data, too late. The server, serving the newest
    // group first, will supersede it anyway; give it up now. Stalled is less than a frame
    // ahead (the live stall rule): at a low playout delay a few frames ahead is the normal
    // state, and a group's last frame may come just after the next group's keyframe.
    const frameS = this.info === null ? 0 : this.info.fps_den / this.info.fps_num;
    if (
      this.started &&
      bufferAhead(ranges, t) < Math.min(LIVE_CONTROL.GAP_AHEAD_S, frameS) &&
      !ranges.some((r) => r.start > t + 1e-3) &&
      scheduler.skipForward()
    ) {
      void this.pump();
    }
    if (!this.started) {
      if (this.firstBufferedMs === null && ranges.length > 0) this.firstBufferedMs = this.deps.now();
      const waitedS = this.firstBufferedMs === null ? 0 : (this.deps.now() - this.firstBufferedMs) / 1000;
      const at = startPosition(edge, ranges, this.targetS, waitedS);
      if (at === null) return;
      this.video.currentTime = at;
      this.started = true;
      this.hooks.firstMedia();
      return;
    }

    const d = control({ liveEdge: edge, currentTime: t, ranges, targetS: this.targetS, playoutS, mode: this.rateMode, skipS });
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

/**
 * Live ABR over the renditions MSE can play at or below `capKbps` (the `bitrate` parameter;
 * null: the whole ladder), starting at the lowest of them.
 */
/**
 * @param fec the session's `live.fec` (null: groups on streams): on datagrams each rendition
 *   costs its bitrate times the parity of a one-frame chunk at that bitrate; with `auto`, the
 *   most parity the server may send (it turns parity on and off with the loss, unannounced).
 */
export function liveAbrFor(info: LiveInfo, capKbps: number | null, targetS: number, supported: (index: number) => boolean, fec: number | 'auto' | null = null): LiveAbr {
  const bitrates = info.renditions.map((r) => r.bitrate_bps);
  let cap = Infinity;
  if (capKbps !== null) {
    const top = selectFixedRendition(info.renditions, capKbps);
    cap = top === null ? Math.min(...bitrates) : (bitrates[top] as number);
  }
  const allowed = (i: number): boolean => supported(i) && (bitrates[i] as number) <= cap;
  const usable = bitrates.map((b, i) => ({ b, i })).filter(({ i }) => allowed(i));
  if (usable.length === 0) throw new Error(`live ABR: MSE supports none of the live renditions at or below ${capKbps ?? '∞'} kbit/s`);
  const lowest = usable.reduce((a, c) => (c.b < a.b ? c : a));
  const k = fec === 'auto' ? AUTO_FEC_MAX_K : fec;
  const wire = k === null ? undefined : bitrates.map((b) => wireFactor(b / 8 / info.fps, k));
  return new LiveAbr(bitrates, { groupS: info.group_duration_us / 1e6, targetS, initial: lowest.i, allowed, wireFactor: wire });
}

/** The browser's MSE buffer and clocks for the live player. */
export function liveBrowserDeps(video: HTMLVideoElement): LiveDeps {
  return {
    openBuffer: (mime) => MediaBuffer.open(video, mime),
    isTypeSupported: (mime) => typeof MediaSource !== 'undefined' && MediaSource.isTypeSupported(mime),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    now: () => Date.now(),
    pageNow: () => performance.now(),
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
    playoutDelayMs: null,
    framesSkipped: null,
    freezeCount: null,
    totalFreezesDurationS: null,
    framesShown: null,
    framesUnreadable: null,
    groupsReceived: null,
    groupsDropped: null,
    fecRecovered: null,
    nacksSent: null,
    fragmentsRetransmitted: null,
    fecGroupsGivenUp: null,
    fecGroupsSuperseded: null,
    liveSeeks: null,
    playbackRate,
    bitrateSwitchLog: null,
  };
}

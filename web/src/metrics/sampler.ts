import { bufferAhead, toRanges } from '../media/ranges';
import { DroppedFrameAttribution } from './dropped-frames';
import { EventLoopLag, watchEventLoop } from './event-loop-lag';
import { PlaybackMetrics, type PlaybackSample } from './playback';
import { StartupTimeline } from './startup';
import type { HealthMetrics, LiveMetrics, Metrics, SegmentRecord } from './types';

/** Sampling period: well under the 50 ms the definitions require. */
export const SAMPLE_INTERVAL_MS = 25;

export interface PlaybackSource {
  /** Every segment appended and endOfStream() called. */
  eos(): boolean;
  renditionAt(t: number): { rendition: number; bitrateBps: number } | null;
  segments(): SegmentRecord[];
  error(): string | null;
  /** Live fields (LiveMetrics); in VOD modes `mode` with nulls. */
  live(): LiveMetrics;
}

/**
 * Browser glue: samples the <video> element every SAMPLE_INTERVAL_MS on the page clock and
 * feeds PlaybackMetrics (which holds every definition). metrics() takes one more sample so
 * the answer is current to the call.
 */
export class MetricsSampler {
  readonly playback = new PlaybackMetrics();
  readonly lag = new EventLoopLag();
  private readonly drops = new DroppedFrameAttribution();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly video: HTMLVideoElement,
    /** Where startup goes, step by step (metrics().startupPhases). */
    readonly startup: StartupTimeline,
    private readonly source: PlaybackSource,
  ) {
    video.addEventListener('seeking', () => this.playback.noteSeek(video.currentTime));
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.sample(), SAMPLE_INTERVAL_MS);
    // After startup only: page load and the first appends are busy by design.
    watchEventLoop(this.lag, () => this.playback.started);
  }

  /** Dropped/decoded frames now and the main thread's lag (HealthMetrics). */
  health(): HealthMetrics {
    const quality = this.quality();
    return {
      droppedFrames: quality?.droppedVideoFrames ?? null,
      decodedFrames: quality?.totalVideoFrames ?? null,
      droppedFramesNearStalls: this.drops.droppedNearStalls,
      ...this.lag.snapshot(),
    };
  }

  private quality(): VideoPlaybackQuality | null {
    return typeof this.video.getVideoPlaybackQuality === 'function' ? this.video.getVideoPlaybackQuality() : null;
  }

  /** The play request; with autoplay this is the page start (performance.now() = 0). */
  startRequested(tMs: number): void {
    this.playback.startRequested(tMs);
    this.startup.playRequested(tMs);
  }

  bufferAhead(): number {
    return bufferAhead(toRanges(this.video.buffered), this.video.currentTime);
  }

  sample(): void {
    const video = this.video;
    const currentTime = video.currentTime;
    const at = this.source.renditionAt(currentTime);
    const s: PlaybackSample = {
      t: performance.now(),
      currentTime,
      bufferAhead: this.bufferAhead(),
      ended: video.ended,
      paused: video.paused,
      eos: this.source.eos(),
      seeking: video.seeking,
      rendition: at?.rendition ?? null,
      bitrateBps: at?.bitrateBps ?? null,
      playbackRate: video.playbackRate,
    };
    this.playback.sample(s);
    this.drops.sample(s.t, this.quality()?.droppedVideoFrames ?? null, this.playback.lowBuffer);
  }

  metrics(): Metrics {
    this.sample();
    const p = this.playback.snapshot();
    const error = this.source.error();
    return {
      bufferingRatio: p.bufferingRatio,
      bufferingRatioWithStartup: p.bufferingRatioWithStartup,
      startupDelayMs: p.startupDelayMs,
      startupPhases: this.startup.snapshot(),
      stallCount: p.stallCount,
      stallSeconds: p.stallSeconds,
      playSeconds: p.playSeconds,
      meanBitrateKbps: p.meanBitrateKbps,
      bitrateSwitches: p.bitrateSwitches,
      ...this.source.live(),
      ...this.health(),
      segments: this.source.segments().map((s) => ({ ...s })),
      ended: p.ended,
      error,
      state: error !== null ? 'error' : p.state,
      bufferSeconds: this.bufferAhead(),
      currentTime: this.video.currentTime,
      frameWidth: this.video.videoWidth > 0 ? this.video.videoWidth : null,
      frameHeight: this.video.videoHeight > 0 ? this.video.videoHeight : null,
    };
  }
}

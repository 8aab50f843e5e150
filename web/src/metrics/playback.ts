/**
 * Puffer-style playback accounting, pure: the browser glue feeds samples taken every
 * ≤ 50 ms on the page clock (performance.now(), ms) and this class classifies the time
 * between consecutive samples. Nothing here reads a real clock, so tests use fake times.
 *
 * Definitions (also in web/README.md):
 * - A sample is *low* when, after startup, the buffered video ahead of `currentTime` is
 *   below STALL_THRESHOLD_S (0.1 s) while the video is neither ended, nor paused by the
 *   viewer, nor fully delivered (`eos`: every segment appended and endOfStream() called —
 *   the last tenth of a second of a finished stream is not a stall). It is also low when
 *   the playhead has not moved for FROZEN_PLAYHEAD_MS while playing (not paused, seeking,
 *   ended or fully delivered), whatever is buffered: the frozen time counts from the last
 *   sample that moved.
 * - Each interval between two samples is classified by the state of the sample at its
 *   START (left Riemann sum; a state change is known at most one interval late in either
 *   direction, so errors cancel out on average and are bounded by one interval per change):
 *     low at start: the time the playhead fell behind the clock → stallSeconds, the time it
 *       played → playSeconds. A thin buffer that keeps up (chunks arriving just in time) plays
 *       on: counting all of it as stalled overstated Vivace's stalls 5–20× (docs/results/thesis-scale).
 *       The shortfall is summed over the whole low episode, signed, so the jitter between
 *       the page clock and `currentTime` cancels instead of piling up as stall.
 *     not low, `currentTime` advanced over the interval → playSeconds
 *     otherwise (paused, ended, seeking, a frozen playhead not yet FROZEN_PLAYHEAD_MS) → neither.
 * - Startup: from `startRequested(t)` (page start with autoplay, else the play request) to
 *   the first frame playing, i.e. the first sample whose `currentTime` is past the value at
 *   the play request. The moment playback began is interpolated as
 *   t − (currentTime advance) / playbackRate, clamped into the interval, so startupDelayMs is
 *   not rounded up to the sampling period. Startup time is neither stall nor play.
 * - stallCount: low episodes after startup in which the playhead fell STALL_MIN_LOSS_MS behind
 *   the clock (a frozen playhead always has); `state` is 'stalled' from then to the episode's end.
 * - bufferingRatio = stallSeconds / (stallSeconds + playSeconds), 0 when both are 0.
 * - bufferingRatioWithStartup = (startup + stall) / (startup + stall + play) seconds, 0 when
 *   all are 0 (the PCC thesis's "time buffering / whole session time"); while startup is still
 *   under way it runs to the last sample, so a viewer that never started has 1, not 0.
 * - meanBitrateKbps: ladder bitrate of the rendition whose media is at `currentTime`,
 *   weighted by play time (stall time carries no weight); 0 before any play time.
 * - bitrateSwitches: changes of that rendition between play intervals.
 */

export const STALL_THRESHOLD_S = 0.1;
/**
 * Live mode: stalled when less than one frame (1/30 s) is buffered ahead. A low-latency live
 * player holds only ~target − network delay ahead (e.g. 0.1 s at a 150 ms target), so the
 * VOD threshold would count smooth playback as stalled; less than a frame ahead means the
 * picture freezes on the next frame.
 */
export const LIVE_STALL_THRESHOLD_S = 1 / 30;
/**
 * A playhead that has not moved for this long while playing (not paused, seeking or ended) is
 * stalled whatever the buffer says: the browser may hold the last frame with about a frame
 * still buffered ahead of `currentTime` (e.g. a live player whose server went away), which the
 * buffer rule alone would count as neither play nor stall. 3 frames at 30 fps; the sampler
 * polls every 25 ms, so a playing element always advances within it.
 */
export const FROZEN_PLAYHEAD_MS = 100;
/**
 * A low episode is a stall once the playhead has lost this much against the page clock: one
 * frame at 25 fps, above the few ms the two clocks drift apart between 25 ms samples.
 */
export const STALL_MIN_LOSS_MS = 40;

/**
 * The page clock's tick: performance.now() is coarsened to 100 µs in a page that is not
 * cross-origin isolated (ours is not). A playhead's shortfall within one tick is rounding.
 */
export const CLOCK_RESOLUTION_MS = 0.1;

export interface PlaybackSample {
  /** Page clock, ms. */
  t: number;
  /** video.currentTime, s. */
  currentTime: number;
  /** Buffered media ahead of currentTime in the range containing it, s (0 if none). */
  bufferAhead: number;
  /** video.ended. */
  ended: boolean;
  /** video.paused: paused by the viewer or not yet started (a stall is not a pause). */
  paused: boolean;
  /** Every segment appended and endOfStream() called. */
  eos: boolean;
  /** video.seeking: a playhead jump is not play. */
  seeking?: boolean;
  /** Rendition index of the media at currentTime (null if unknown). */
  rendition: number | null;
  /** Its ladder bitrate, bit/s. */
  bitrateBps: number | null;
  playbackRate?: number;
}

export interface PlaybackSnapshot {
  bufferingRatio: number;
  bufferingRatioWithStartup: number;
  startupDelayMs: number | null;
  stallCount: number;
  stallSeconds: number;
  playSeconds: number;
  meanBitrateKbps: number;
  bitrateSwitches: number;
  ended: boolean;
  state: 'loading' | 'startup' | 'playing' | 'stalled' | 'paused' | 'ended';
}

const ADVANCE_EPSILON_S = 1e-3;

export class PlaybackMetrics {
  private startMs: number | null = null;
  private startCurrentTime: number | null = null;
  private startupEndMs: number | null = null;
  private prev: PlaybackSample | null = null;
  private stallMs = 0;
  private playMs = 0;
  private bitrateMsSum = 0;
  private bitrateMs = 0;
  private stalls = 0;
  /** The last sample was low (either rule). */
  private low = false;
  /** In the current low episode: page time minus playhead advance (signed, ms). */
  private episodeLossMs = 0;
  /** Of it, what stallMs already holds. */
  private episodeStallMs = 0;
  /** The current low episode has counted as a stall. */
  private inStall = false;
  private switches = 0;
  private lastPlayedRendition: number | null = null;
  private sawEnded = false;
  private lastState: PlaybackSnapshot['state'] = 'loading';
  private seekPending = false;
  /** Page time the playhead was last seen moving (or jumped, or resumed from a pause). */
  private lastMoveMs = 0;
  /** Time since then counted as neither play nor stall: a stall if the playhead stays frozen. */
  private unaccountedMs = 0;
  private frozen = false;

  constructor(private stallThresholdS = STALL_THRESHOLD_S) {}

  /** Change the stall threshold (live mode), before playback starts. */
  setStallThreshold(seconds: number): void {
    this.stallThresholdS = seconds;
  }

  /** The play request (page start with autoplay). Later calls are ignored. */
  startRequested(tMs: number): void {
    if (this.startMs === null) this.startMs = tMs;
  }

  /**
   * A seek (the 'seeking' event) to `currentTime`: the jump is not playback. Before startup
   * it moves the reference position; after, the interval holding the jump is not play.
   */
  noteSeek(currentTime: number): void {
    if (this.startupEndMs === null) {
      if (this.startMs !== null) this.startCurrentTime = currentTime;
    } else {
      this.seekPending = true;
    }
  }

  get started(): boolean {
    return this.startupEndMs !== null;
  }

  /** Stalled at the last sample: a low episode whose playhead fell behind. */
  get stalled(): boolean {
    return this.inStall;
  }

  /** Low at the last sample (either rule), whether or not the playhead has fallen behind. */
  get lowBuffer(): boolean {
    return this.low;
  }

  /** Below the stall threshold (not ended, paused or fully delivered): a stall if it lasts. */
  isLow(s: PlaybackSample): boolean {
    return !s.ended && !s.paused && !s.eos && s.bufferAhead < this.stallThresholdS;
  }

  /** Low by either rule: little buffered ahead, or a playhead frozen while playing. */
  private lowNow(s: PlaybackSample): boolean {
    return this.isLow(s) || this.frozen;
  }

  sample(s: PlaybackSample): void {
    const prev = this.prev;
    if (prev !== null && s.t < prev.t) return; // a clock never goes back; ignore junk
    this.prev = s;
    if (s.ended) this.sawEnded = true;
    if (this.startMs === null) {
      this.lastState = 'loading';
      return;
    }
    if (this.startCurrentTime === null || (this.startupEndMs === null && s.seeking)) {
      this.startCurrentTime = s.currentTime;
    }

    if (this.startupEndMs === null) {
      if (s.currentTime > this.startCurrentTime + ADVANCE_EPSILON_S && prev !== null && !prev.seeking) {
        // First frame played during (prev.t, s.t]: interpolate when.
        const rate = s.playbackRate && s.playbackRate > 0 ? s.playbackRate : 1;
        const advancedMs = ((s.currentTime - this.startCurrentTime) * 1000) / rate;
        const lower = Math.max(prev.t, this.startMs);
        const began = Math.min(s.t, Math.max(lower, s.t - advancedMs));
        this.startupEndMs = began;
        this.addPlay(s.t - began, s.rendition ?? prev.rendition, s.bitrateBps ?? prev.bitrateBps);
        this.lastMoveMs = s.t;
        this.afterSample(s);
      } else {
        this.lastState = s.ended ? 'ended' : 'startup';
      }
      return;
    }

    const jumped = this.seekPending;
    this.seekPending = false;
    const moved = prev === null || s.currentTime > prev.currentTime + ADVANCE_EPSILON_S;
    if (prev !== null) {
      const dt = s.t - prev.t;
      if (this.lowNow(prev)) {
        this.lowInterval(prev, s, dt, jumped);
      } else if (s.currentTime > prev.currentTime && !prev.ended && !prev.seeking && !s.seeking && !jumped) {
        this.addPlay(dt, prev.rendition ?? s.rendition, prev.bitrateBps ?? s.bitrateBps);
      } else if (!prev.paused && !prev.ended && !prev.seeking) {
        this.unaccountedMs += dt;
      }
    }
    this.trackFrozen(s, moved || jumped);
    this.afterSample(s);
  }

  private trackFrozen(s: PlaybackSample, moved: boolean): void {
    const playing = !s.ended && !s.paused && !s.eos && !s.seeking && (s.playbackRate ?? 1) > 0;
    if (moved || !playing) {
      this.lastMoveMs = s.t;
      this.unaccountedMs = 0;
      this.frozen = false;
      return;
    }
    if (!this.frozen && s.t - this.lastMoveMs >= FROZEN_PLAYHEAD_MS) {
      // The time since the playhead stopped was a stall all along.
      this.frozen = true;
      this.stallMs += this.unaccountedMs;
      this.episodeLossMs += this.unaccountedMs;
      this.episodeStallMs += this.unaccountedMs;
      this.unaccountedMs = 0;
      this.countStall();
    }
  }

  /**
   * An interval that began low: the playhead's shortfall against the clock is stall, the
   * rest play. A seek's jump says nothing about playing, so all of such an interval stalls.
   */
  private lowInterval(prev: PlaybackSample, s: PlaybackSample, dt: number, jumped: boolean): void {
    const measurable = !jumped && !prev.seeking && !s.seeking && !prev.ended;
    const rate = prev.playbackRate && prev.playbackRate > 0 ? prev.playbackRate : 1;
    const advancedMs = measurable ? (Math.max(0, s.currentTime - prev.currentTime) * 1000) / rate : 0;
    // A playhead that kept pace leaves the clocks' rounding in (dt − advanced): float residue
    // (~1e-13 ms) or one tick of the page clock. That is no wait.
    const shortfallMs = dt - advancedMs;
    const ticks = Math.round(Math.abs(shortfallMs) / CLOCK_RESOLUTION_MS);
    this.episodeLossMs += ticks <= 1 ? 0 : shortfallMs;
    const stall = Math.min(dt, Math.max(0, this.episodeLossMs - this.episodeStallMs));
    this.stallMs += stall;
    this.episodeStallMs += stall;
    if (measurable && advancedMs > 0) {
      this.addPlay(dt - stall, prev.rendition ?? s.rendition, prev.bitrateBps ?? s.bitrateBps);
    }
    if (this.episodeLossMs >= STALL_MIN_LOSS_MS) this.countStall();
  }

  private countStall(): void {
    if (this.inStall) return;
    this.inStall = true;
    this.stalls += 1;
  }

  private afterSample(s: PlaybackSample): void {
    this.low = this.lowNow(s);
    if (!this.low) {
      this.episodeLossMs = 0;
      this.episodeStallMs = 0;
      this.inStall = false;
    }
    this.lastState = s.ended ? 'ended' : this.inStall ? 'stalled' : s.paused ? 'paused' : 'playing';
  }

  private addPlay(ms: number, rendition: number | null, bitrateBps: number | null): void {
    if (ms <= 0) return;
    this.playMs += ms;
    if (bitrateBps !== null) {
      this.bitrateMsSum += bitrateBps * ms;
      this.bitrateMs += ms;
    }
    if (rendition !== null) {
      if (this.lastPlayedRendition !== null && rendition !== this.lastPlayedRendition) this.switches += 1;
      this.lastPlayedRendition = rendition;
    }
  }

  /** Startup time so far: to the first frame, or to the last sample while still starting. */
  private startupSeconds(): number {
    if (this.startMs === null) return 0;
    const end = this.startupEndMs ?? this.prev?.t ?? this.startMs;
    return Math.max(0, end - this.startMs) / 1000;
  }

  snapshot(): PlaybackSnapshot {
    const stallSeconds = this.stallMs / 1000;
    const playSeconds = this.playMs / 1000;
    const total = stallSeconds + playSeconds;
    const startupSeconds = this.startupSeconds();
    const session = startupSeconds + total;
    return {
      bufferingRatio: total > 0 ? stallSeconds / total : 0,
      bufferingRatioWithStartup: session > 0 ? (startupSeconds + stallSeconds) / session : 0,
      startupDelayMs:
        this.startupEndMs !== null && this.startMs !== null ? this.startupEndMs - this.startMs : null,
      stallCount: this.stalls,
      stallSeconds,
      playSeconds,
      meanBitrateKbps: this.bitrateMs > 0 ? this.bitrateMsSum / this.bitrateMs / 1000 : 0,
      bitrateSwitches: this.switches,
      ended: this.sawEnded,
      state: this.lastState,
    };
  }
}

/**
 * The live player's playout delay, pure: how far behind the live edge to play, from how late
 * frames become playable — a receiver's jitter buffer (WebRTC's plays each frame its estimated
 * jitter after its expected arrival) rather than a fixed set point. The target latency
 * (`latency`) is the ceiling.
 *
 * A frame captured at c becomes playable when its chunk is appended, at r; its delay is
 * d = r − c (network one-way delay, queueing, the burst of a keyframe, the server's send, the
 * page's event loop, the wait behind an older group and the append). Media time is capture
 * time, so playing λ behind the live edge shows that frame at c + λ: it is on time when d < λ
 * less the append → decode time. No frame is kept in hand: a stall is time the playhead
 * waits (web/README.md, `stallSeconds`), not a thin buffer that keeps up. So the playout delay is
 *
 *   λ = min(ceiling, envelope(d) + MARGIN_MS + JITTER_SIGMAS · σ)
 *
 * where the envelope is the largest recent delay: a new delay raises it at once (late frames
 * stall, and a stall costs more latency than a margin saves), and it comes down slowly — each
 * delay counts in full for HOLD_MS, then halves every HALF_LIFE_MS. The largest delay, not a
 * percentile: every group starts with a keyframe several times a frame's size, sent as one
 * burst, so a percentile below the keyframes' share (1 frame in 15) is one stall per group.
 * σ is the standard deviation of the groups' largest delays over the last JITTER_GROUPS
 * groups: the envelope only covers what was seen, and on a path whose delay jumps (an RTT
 * change, a busy page) the next jump may be larger; as WebRTC's jitter buffer adds 2.33 σ of
 * its delay noise, a steady path pays little for it and a jumpy one plays at the ceiling.
 *
 * The envelope is trusted once WARMUP_FRAMES frames are measured; until then (and after
 * `rewarm()`) the playout delay is the ceiling. The group in progress when joining is not
 * measured (the player passes the next group's start as `fromCaptureMs`): it comes as one
 * burst, so its delays are the join's, not the path's. A switch to a rendition with larger
 * frames calls `rewarm(fromBps, toBps)`: its keyframes take longer than any measured so far.
 * Until they are measured, what the envelope and σ hold above the base delay (the smallest
 * recent delay: the path's part, which does not grow with the frame) counts toBps / fromBps
 * times — an upper bound, as a frame's bytes, and so its time at the sender's pace, grow with
 * the bitrate — instead of the ceiling, which made every switch up a latency excursion of
 * 1–2 s.
 */

export const LIVE_PLAYOUT = {
  /**
   * Above the envelope: the time from the append to the frame being decoded, and the 50 ms
   * control loop's granularity (its slow band lets the latency sit up to 10 ms low), ms.
   */
  MARGIN_MS: 20,
  /** A delay counts in full this long after it was measured, ms (the RTT changes every few seconds on video-rttflap). */
  HOLD_MS: 10_000,
  /** ...then its weight halves every this many ms. */
  HALF_LIFE_MS: 5_000,
  /** Frames measured before the envelope is trusted: one group (0.5 s), its keyframe included. */
  WARMUP_FRAMES: 15,
  /** Standard deviations of the groups' largest delays added to the playout delay. */
  JITTER_SIGMAS: 2,
  /** Groups whose largest delays σ is taken over (10 s of 0.5 s groups, as HOLD_MS). */
  JITTER_GROUPS: 20,
} as const;

interface DelaySample {
  atMs: number;
  delayMs: number;
}

export class PlayoutDelay {
  /**
   * Samples that may still be the envelope: strictly decreasing delays, oldest first (a
   * sample no larger than a later one never counts again: the later one decays later).
   */
  private samples: DelaySample[] = [];
  /** Frames measured since the start or the last `rewarm`. */
  private measured = 0;
  /** While not warm after a switch up: the bitrate the envelope was measured at (null: play at the ceiling). */
  private scaleFromBps: number | null = null;
  /** ...and the bitrate of the frames coming. */
  private scaleToBps = 0;
  /** The largest and smallest delay of each recent group, ms. */
  private readonly groups = new Map<number, { maxMs: number; minMs: number }>();

  /**
   * @param ceilingMs the target latency
   * @param fromCaptureMs frames captured before this are not measured
   */
  constructor(
    private readonly ceilingMs: number,
    private readonly fromCaptureMs = -Infinity,
  ) {}

  /** A frame of `group` captured at `captureMs` became playable at `readyMs` (both wall clock, ms). */
  onFrame(group: number, captureMs: number, readyMs: number): void {
    if (captureMs < this.fromCaptureMs) return;
    // A delay beyond the ceiling cannot be played at anyway; held in full it would keep the
    // playout delay at the ceiling long after.
    const delayMs = Math.min(readyMs - captureMs, this.ceilingMs);
    this.measured += 1;
    const seen = this.groups.get(group);
    this.groups.set(group, { maxMs: Math.max(seen?.maxMs ?? -Infinity, delayMs), minMs: Math.min(seen?.minMs ?? Infinity, delayMs) });
    for (const g of this.groups.keys()) if (g <= group - LIVE_PLAYOUT.JITTER_GROUPS) this.groups.delete(g);
    while (this.samples.length > 0 && (this.samples[this.samples.length - 1] as DelaySample).delayMs <= delayMs) this.samples.pop();
    this.samples.push({ atMs: readyMs, delayMs });
    // The oldest sample has the largest delay; once it weighs less than the next one it
    // never weighs more again (both halve alike from then on).
    while (this.samples.length > 1 && this.weighted(this.samples[0] as DelaySample, readyMs) <= this.weighted(this.samples[1] as DelaySample, readyMs)) this.samples.shift();
  }

  /**
   * Distrust the envelope until WARMUP_FRAMES more frames are measured. Meanwhile the playout
   * delay is the ceiling, or — given the bitrates of a switch up — what the envelope and σ
   * hold above the base delay, scaled by toBps / fromBps. Calls before the new frames are
   * measured keep the first switch's `fromBps` (the frames the envelope was measured on).
   */
  rewarm(fromBps?: number, toBps?: number): void {
    const scalable = fromBps !== undefined && toBps !== undefined && fromBps > 0 && toBps >= fromBps;
    if (!scalable) this.scaleFromBps = null;
    else if (this.warm) this.scaleFromBps = fromBps;
    if (scalable) this.scaleToBps = toBps;
    this.measured = 0;
  }

  /** Whether the envelope is trusted (WARMUP_FRAMES frames measured since the start or the last `rewarm`). */
  get warm(): boolean {
    return this.measured >= LIVE_PLAYOUT.WARMUP_FRAMES;
  }

  private weighted(s: DelaySample, nowMs: number): number {
    const late = Math.max(0, nowMs - s.atMs - LIVE_PLAYOUT.HOLD_MS);
    return s.delayMs * Math.pow(0.5, late / LIVE_PLAYOUT.HALF_LIFE_MS);
  }

  /** The envelope of the measured delays now, ms (null before any frame is measured). */
  envelopeMs(nowMs: number): number | null {
    let best: number | null = null;
    for (const s of this.samples) best = Math.max(best ?? -Infinity, this.weighted(s, nowMs));
    return best;
  }

  /** The smallest delay of the recent groups, ms (Infinity before any frame is measured). */
  baseMs(): number {
    return Math.min(...[...this.groups.values()].map((g) => g.minMs));
  }

  /** Standard deviation of the recent groups' largest delays, ms (0 with fewer than 3 groups). */
  jitterMs(): number {
    const xs = [...this.groups.values()].map((g) => g.maxMs);
    if (xs.length < 3) return 0;
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    return Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length);
  }

  /** The playout delay now, s: envelope + MARGIN_MS + JITTER_SIGMAS · σ, at most the ceiling; until warm, the ceiling or (after a switch up) the scaled allowance. */
  delayS(nowMs: number): number {
    const envelope = this.envelopeMs(nowMs);
    if (envelope === null) return this.ceilingMs / 1000;
    let scale = 1;
    if (!this.warm) {
      if (this.scaleFromBps === null) return this.ceilingMs / 1000;
      scale = this.scaleToBps / this.scaleFromBps;
    }
    const base = Math.max(0, Math.min(envelope, this.baseMs()));
    const ms = base + scale * (Math.max(0, envelope) - base + LIVE_PLAYOUT.JITTER_SIGMAS * this.jitterMs()) + LIVE_PLAYOUT.MARGIN_MS;
    return Math.min(this.ceilingMs, ms) / 1000;
  }
}

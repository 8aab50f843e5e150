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
 * where the envelope is the largest recent delay of a group: a new delay raises it at once (late
 * frames stall, and a stall costs more latency than a margin saves), and it comes down slowly —
 * each group's largest delay counts in full for HOLD_MS, then halves every HALF_LIFE_MS. The
 * largest delay, not a percentile: every group starts with a keyframe several times a frame's
 * size, sent as one burst, so a percentile below the keyframes' share (1 frame in 15) is one
 * stall per group. One exception: once the group after it is in, the single largest group
 * counts as the second largest. A lone late group (a lost packet whose retransmission held one
 * group's stream for an RTT: about once in 45 s at the thesis's 0.01 % loss and 2.5 Mbit/s)
 * stalled the playhead before anything could be done, and holding it for HOLD_MS kept the
 * latency ~100 ms higher for 10–15 s for a repeat that seldom comes (session 13's
 * video-rttflap trace); a rise that persists (an RTT step, a queue) or recurs (late groups every
 * few seconds) has a second group as late and is held in full. Two more late episodes come from
 * one event and are not held (`transient=drop`, the default; `hold` keeps them): the first
 * TRANSIENT_GROUPS groups after the join or a switch up — the sender's ramp, ~0.5 s of queue at
 * the sender when live ABR's pick exceeds the controller's initial rate — stop counting once a
 * later group is in; and the two largest groups, when adjacent (one hold across their
 * boundary), count as the third largest once the group after them is in (session 28).
 * σ is the standard deviation of the groups' largest delays over the last JITTER_GROUPS
 * groups: the envelope only covers what was seen, and on a path whose delay jumps (an RTT
 * change, a busy page, a lost packet) the next jump may be larger; as WebRTC's jitter buffer
 * adds 2.33 σ of its delay noise, a steady path pays little for it and a jumpy one plays at
 * the ceiling. With the `diff` estimator σ comes from the successive differences of those
 * delays instead (√(mean square difference / 2), von Neumann's): the same for independent
 * noise, but a path that moves between levels — video-rttflap's RTT, redrawn every 5 s — counts
 * its jumps, not the distance between its levels, which the envelope already holds: the
 * standard deviation of two levels Δ apart is Δ / 2, so 2 σ adds Δ on top of the higher level
 * held, as if the next jump would be as large again. WebRTC's jitter estimate, too, is taken
 * from frame delay variations, not from delay levels.
 *
 * The envelope is trusted once WARMUP_FRAMES frames are measured; until then (and after
 * `rewarm()`) the playout delay is the ceiling. The group in progress when joining is not
 * measured (the player passes the next group's start as `fromCaptureMs`): it comes as one
 * burst, so its delays are the join's, not the path's. A switch to a rendition with larger
 * frames calls `rewarm(fromBps, toBps)` when it is decided: its keyframes take longer than any
 * measured so far. Until WARMUP_FRAMES frames of toBps are measured, the playout delay at the
 * decision plus (toBps / fromBps − 1) × the keyframes' excess over their group's quickest frame
 * — a delay is the path's part (the group's quickest frame) plus the frame's bytes over the
 * sender's pace, and only the bytes grow, at most with the bitrate — instead of the ceiling,
 * which made every switch up a latency excursion of 1–2 s. Live ABR's start-up picks a rendition after its first groups,
 * possibly the ladder's top: while it runs, `anticipate(fromBps, topBps)` scales the same way
 * from the first measured frame (the first measured group's keyframe, its largest), instead of
 * playing its 2–2.5 s at the ceiling.
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
  /** Groups are kept this long after their largest delay: by then it weighs under 1/16 of itself. */
  KEEP_MS: 10_000 + 4 * 5_000,
  /** Frames measured before the envelope is trusted: one group (0.5 s), its keyframe included. */
  WARMUP_FRAMES: 15,
  /** Standard deviations of the groups' largest delays added to the playout delay. */
  JITTER_SIGMAS: 2,
  /** Groups whose largest delays σ is taken over (10 s of 0.5 s groups, as HOLD_MS). */
  JITTER_GROUPS: 20,
  /**
   * With `transient=drop`: the first this many groups after the join or a switch up stop
   * counting once a later group is in (the sender's ramp to the new rate: about 1 s), and two
   * adjacent late groups (one hold across their boundary) count as a lone late group does.
   */
  TRANSIENT_GROUPS: 2,
} as const;

/**
 * Whether the delays of the groups right after the join or a switch up are held as any others
 * (`hold`) or stop counting once a later group is in (`drop`).
 */
export type TransientRule = 'hold' | 'drop';
export const TRANSIENT_RULES: readonly TransientRule[] = ['hold', 'drop'];

/** How σ is estimated from the recent groups' largest delays: standard deviation, or successive differences. */
export type JitterEstimator = 'sd' | 'diff';
export const JITTER_ESTIMATORS: readonly JitterEstimator[] = ['sd', 'diff'];

interface GroupDelays {
  /** Largest and smallest delay of the group's frames, ms. */
  maxMs: number;
  minMs: number;
  /** When the largest delay was measured (wall clock, ms). */
  atMs: number;
  /** Frames measured. */
  frames: number;
  /** One of the first TRANSIENT_GROUPS groups after the join or a switch up. */
  transient: boolean;
}

/** The playout delay's parts, ms. */
interface DelayParts {
  /** Envelope + JITTER_SIGMAS · σ. */
  coverMs: number;
  /** A group's keyframe delay beyond its quickest frame (median of the recent groups): the part that grows with the frames' size. */
  excessMs: number;
}

/** What a switch up scales: the parts when it was decided. */
interface SwitchBasis extends DelayParts {
  fromBps: number;
}

export class PlayoutDelay {
  /** Recent groups (KEEP_MS), by group number. */
  private readonly groups = new Map<number, GroupDelays>();
  private newest = -Infinity;
  private lastReadyMs = -Infinity;
  /** Frames measured since the start or the last `rewarm`. */
  private measured = 0;
  /** While not warm after a switch up: what it scales (null: play at the ceiling). */
  private basis: SwitchBasis | null = null;
  /** ...and the bitrate of the frames coming. */
  private scaleToBps = 0;
  /** A switch up decided whose frames have not come yet: lower bitrates' frames do not count towards warming up (null: none). */
  private pendingBps: number | null = null;
  /** New groups still to be marked transient (the join, or a switch up, was this many groups ago at most). */
  private transientLeft: number = LIVE_PLAYOUT.TRANSIENT_GROUPS;
  /** While live ABR's start-up runs: the scale for a switch it may make (1: none). */
  private anticipated = 1;

  /**
   * @param ceilingMs the target latency
   * @param fromCaptureMs frames captured before this are not measured
   * @param jitter how σ is estimated
   * @param transient how the delays right after the join or a switch up count
   */
  constructor(
    private readonly ceilingMs: number,
    private readonly fromCaptureMs = -Infinity,
    private readonly jitter: JitterEstimator = 'sd',
    private readonly transient: TransientRule = 'drop',
  ) {}

  /**
   * A frame of `group` captured at `captureMs` became playable at `readyMs` (both wall clock,
   * ms), at its rendition's `bitrateBps` (0: not given).
   */
  onFrame(group: number, captureMs: number, readyMs: number, bitrateBps = 0): void {
    if (captureMs < this.fromCaptureMs) return;
    // A delay beyond the ceiling cannot be played at anyway; held in full it would keep the
    // playout delay at the ceiling long after.
    const delayMs = Math.min(readyMs - captureMs, this.ceilingMs);
    // After a switch up is decided, the old rendition's last frames do not stand for the new one's.
    const old = this.pendingBps !== null && bitrateBps > 0 && bitrateBps < this.pendingBps;
    if (!old) {
      this.pendingBps = null;
      this.measured += 1;
    }
    const seen = this.groups.get(group);
    if (seen === undefined) {
      const transient = !old && this.transientLeft > 0 && group > this.newest;
      if (transient) this.transientLeft -= 1;
      this.groups.set(group, { maxMs: delayMs, minMs: delayMs, atMs: readyMs, frames: 1, transient });
    }
    else {
      if (delayMs > seen.maxMs) Object.assign(seen, { maxMs: delayMs, atMs: readyMs });
      seen.minMs = Math.min(seen.minMs, delayMs);
      seen.frames += 1;
    }
    this.newest = Math.max(this.newest, group);
    this.lastReadyMs = Math.max(this.lastReadyMs, readyMs);
    for (const [g, d] of this.groups) if (g < this.newest && d.atMs < readyMs - LIVE_PLAYOUT.KEEP_MS) this.groups.delete(g);
  }

  /**
   * Distrust the envelope until WARMUP_FRAMES more frames are measured — of `toBps` or above,
   * if given. Meanwhile the playout delay is the ceiling, or — given the bitrates of a switch
   * up — the one at the call plus (toBps / fromBps − 1) × the keyframes' excess (or what the
   * new frames measure, if more). Calls before the new frames are measured keep the first
   * switch's basis (the frames the envelope was measured on).
   */
  rewarm(fromBps?: number, toBps?: number): void {
    const scalable = fromBps !== undefined && toBps !== undefined && fromBps > 0 && toBps >= fromBps;
    if (!scalable) this.basis = null;
    else if (this.warm || this.measuringStartUp) this.basis = { fromBps, ...this.parts(this.lastReadyMs) };
    if (scalable) this.scaleToBps = toBps;
    if (scalable && toBps > fromBps) this.transientLeft = LIVE_PLAYOUT.TRANSIENT_GROUPS;
    this.pendingBps = scalable ? toBps : null;
    this.measured = 0;
  }

  /** A switch up decided earlier will not come (the player switched down instead): every frame counts towards warming up again. */
  cancelSwitch(): void {
    this.pendingBps = null;
    this.transientLeft = 0;
  }

  /**
   * Live ABR's start-up is measuring frames of `fromBps` and may switch up to `toBps`: the
   * playout delay adds (toBps / fromBps − 1) × the keyframes' excess, from the first measured
   * frame on. Without arguments: the start-up is over.
   */
  anticipate(fromBps?: number, toBps?: number): void {
    this.anticipated = fromBps !== undefined && toBps !== undefined && fromBps > 0 && toBps > fromBps ? toBps / fromBps : 1;
  }

  /**
   * Live ABR's start-up has measured frames since the join or its switch: the first is a
   * group's keyframe, its largest, and the start-up's scaling is the safety margin.
   */
  private get measuringStartUp(): boolean {
    return this.anticipated > 1 && this.measured > 0;
  }

  /** Whether the envelope is trusted (WARMUP_FRAMES frames measured since the start or the last `rewarm`). */
  get warm(): boolean {
    return this.measured >= LIVE_PLAYOUT.WARMUP_FRAMES;
  }

  private weighted(delayMs: number, atMs: number, nowMs: number): number {
    const late = Math.max(0, nowMs - atMs - LIVE_PLAYOUT.HOLD_MS);
    return delayMs * Math.pow(0.5, late / LIVE_PLAYOUT.HALF_LIFE_MS);
  }

  /**
   * The envelope of the measured delays now, ms (null before any frame is measured): the
   * largest weighted group delay, a lone late group's counting as the second largest
   * (`withoutLoneLargest`).
   */
  envelopeMs(nowMs: number): number | null {
    const groups = this.counted();
    if (groups.length === 0) return null;
    return Math.max(...this.withoutLoneLargest(groups.map(([g, d]) => [g, this.weighted(d.maxMs, d.atMs, nowMs)])));
  }

  /**
   * The values of `groups` with the single largest replaced by the second largest once the
   * group after it is in (a lone late group); the largest stays if it is the newest group's or
   * its successor is missing (lost: the path may be worse). With `transient=drop`, also two
   * adjacent largest groups (one episode across their boundary) once the group after them is in.
   */
  private withoutLoneLargest(groups: [number, number][]): number[] {
    const ranked = [...groups].sort(([, a], [, b]) => b - a);
    const [top, next, third] = ranked;
    if (top === undefined || next === undefined) return groups.map(([, v]) => v);
    // With `transient=drop`, one hold across a group boundary (a loss repaired, the page
    // stalled) is one late episode too: the two adjacent groups it delayed, once the group
    // after them is in, count as the third largest.
    if (this.transient === 'drop' && third !== undefined && Math.abs(top[0] - next[0]) === 1 && this.confirmed(Math.max(top[0], next[0]))) {
      return groups.map(([g, v]) => (g === top[0] || g === next[0] ? third[1] : v));
    }
    const lone = this.confirmed(top[0]);
    return groups.map(([g, v]) => (lone && g === top[0] ? next[1] : v));
  }

  /** Whether the group after `group` is in: a late group then was a lone one, or the path's (confirmed by the next). */
  private confirmed(group: number): boolean {
    return group !== this.newest && this.groups.has(group + 1);
  }

  /**
   * The groups whose delays count: with `transient=drop`, not a transient group once a later
   * group that is not is in — the sender's ramp after the join or a switch up is over, and the
   * later group shows the path's delay at the new rate.
   */
  private counted(): [number, GroupDelays][] {
    const all = [...this.groups];
    if (this.transient === 'hold') return all;
    let newestSettled = -Infinity;
    for (const [g, d] of all) if (!d.transient) newestSettled = Math.max(newestSettled, g);
    return all.filter(([g, d]) => !d.transient || g > newestSettled);
  }

  /** The last JITTER_GROUPS groups, in group order. */
  private recent(): [number, GroupDelays][] {
    return this.counted().filter(([g]) => g > this.newest - LIVE_PLAYOUT.JITTER_GROUPS).sort(([a], [b]) => a - b);
  }

  /**
   * σ of the recent groups' largest delays, ms (0 with fewer than 3 groups): their standard
   * deviation, or with the `diff` estimator √(mean square successive difference / 2), in group
   * order; the single largest counting as the second largest once confirmed, as in the envelope
   * (`withoutLoneLargest`). A lone late group (at the thesis's 0.01 % loss, a retransmission
   * every 40–50 s of a 2.5 Mbit/s stream) counted in full added ~55 ms to the playout delay
   * for the 10 s it stays in σ's window: on video-rttflap, a quarter of the time.
   */
  jitterMs(): number {
    const groups = this.recent();
    if (groups.length < 3) return 0;
    const xs = this.withoutLoneLargest(groups.map(([g, d]) => [g, d.maxMs]));
    if (this.jitter === 'diff') {
      let sum = 0;
      for (let i = 1; i < xs.length; i++) sum += ((xs[i] as number) - (xs[i - 1] as number)) ** 2;
      return Math.sqrt(sum / (2 * (xs.length - 1)));
    }
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    return Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length);
  }

  /** Median over the recent groups (of two frames or more) of the largest delay less the smallest, ms (0 before any). */
  excessMs(): number {
    const xs = this.recent()
      .map(([, g]) => g)
      .filter((g) => g.frames >= 2)
      .map((g) => g.maxMs - g.minMs)
      .sort((x, y) => x - y);
    return xs.length === 0 ? 0 : (xs[Math.floor(xs.length / 2)] as number);
  }

  private parts(nowMs: number): DelayParts {
    const envelope = Math.max(0, this.envelopeMs(nowMs) ?? 0);
    return { coverMs: envelope + LIVE_PLAYOUT.JITTER_SIGMAS * this.jitterMs(), excessMs: this.excessMs() };
  }

  /**
   * The playout delay now, s: envelope + MARGIN_MS + JITTER_SIGMAS · σ, at most the ceiling.
   * Frames `scale` times larger (a switch up, or the one live ABR's start-up may make) add
   * (scale − 1) × the keyframes' excess: a frame's delay is its path's part (its group's
   * quickest frame: the one-way delay, the RTT of the moment, the queue) plus its bytes over the
   * sender's pace, and only the bytes grow. Until warm, the ceiling, or after a switch up the
   * scaled basis (or what the new frames measure, if more).
   */
  delayS(nowMs: number): number {
    if (this.groups.size === 0) return this.ceilingMs / 1000;
    const now = this.parts(nowMs);
    const scaled = (p: DelayParts, scale: number): number => p.coverMs + (scale - 1) * p.excessMs;
    let ms: number;
    if (this.warm || this.measuringStartUp) ms = scaled(now, this.anticipated);
    else if (this.basis !== null) ms = Math.max(scaled(this.basis, this.scaleToBps / this.basis.fromBps), now.coverMs);
    else return this.ceilingMs / 1000;
    return Math.min(this.ceilingMs, ms + LIVE_PLAYOUT.MARGIN_MS) / 1000;
  }
}

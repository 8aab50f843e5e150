/**
 * Live ABR: which live rendition to subscribe to, decided at every group boundary from what the
 * player measures. Pure (no streams, no clock): src/watch/live.ts feeds it chunk arrivals and
 * group ends and applies its decisions; unit tests replay recorded arrival traces.
 *
 * The algorithm is Learn2Adapt-LowLatency (L2A-LL; Karagkioules, Mekuria, Griffioen, Wagenaar,
 * "Online learning for low-latency adaptive streaming", ACM MMSys 2020; as in dash.js
 * src/streaming/rules/abr/L2ARule.js): a probability vector w over the ladder is moved by a
 * Lagrangian gradient step after every measured group, a multiplier Q accumulates how far the
 * chosen bitrates have run ahead of the measured throughput (the buffer displacement), and the
 * rendition is the one closest to the expected bitrate b·w. Changes for a live channel of
 * one-frame chunks (docs/live.md, "Live ABR"):
 * - Throughput per group with idle gaps removed, robust to a busy page: arrival times are
 *   when the page's event loop got to a chunk, up to ~100 ms late on a loaded machine, so only
 *   minima of delays are trusted (lateness only adds). The base delay is the windowed minimum
 *   of arrival − capture; a chunk's queueing delay is its excess over it.
 *   - A group whose chunks all queued (its minimum queueing delay above QUEUED_MS) kept the
 *     path busy from its first frame's capture (+ base delay) to its last arrival: its bytes
 *     over that time.
 *   - Otherwise the path idled between frames; what it can carry shows in keyframes (about
 *     twice a frame, sent as one burst at the controller's pace): a keyframe's bytes beyond
 *     the base chunk's, over its queueing delay, is a rate sample, and the highest sample of
 *     the last KEY_WINDOW_MS (the least delayed by the page) is the throughput.
 *   (dash.js measures a whole segment request; a live channel has no request per group, and the
 *   source's pace would otherwise be measured instead of the path's.)
 * - Step V is the group duration; the playback-rate factor of dash.js is dropped (a live
 *   source produces in real time whatever the playback rate; catching up drains the buffer,
 *   not the link).
 * - Start-up: the first STARTUP_GROUPS measured groups pick the highest rendition below
 *   STARTUP_SAFETY × the measured throughput (dash.js waits for a 1.5 s buffer, which a 300 ms
 *   latency target never holds).
 * - Up-switches: one step at a time (as dash.js), only when the next rendition is below the
 *   throughput divided by UP_MARGIN (keyframes arrive as bursts above the mean bitrate), and
 *   not within UP_HOLD_GROUPS of a down-switch (GUARD_HOLD_GROUPS after a guard's). The
 *   throughput for a step up is measured on the rendition playing: each step up is a probe,
 *   and its result is in before the next (one sample that read too high — a keyframe as the
 *   path's delay fell — otherwise climbs every group while it stays in the window).
 *   Down-switches by throughput only when the current rendition is above the throughput
 *   (the learner's expected bitrate may drift below a rendition the path still carries;
 *   dash.js would follow it, and oscillate).
 * - Latency and buffer guard: a group the player lost (reset by the server, or given up as
 *   too late), a queueing delay (the minimum over the group's last GUARD_CHUNKS chunks) above
 *   LATENCY_SHARE of the target, or a buffer below one frame while the latency is over target
 *   steps down at once (to below GUARD_SAFETY × the rate delivered over the last second, if
 *   that is lower)
 *   and raises Q as dash.js does on over-estimation, so the learner does not climb right back.
 */

/** One CMAF chunk's arrival: the player's clock against the channel's capture clock. */
export interface ChunkArrival {
  group: number;
  /** Rendition index (LIVE_INFO order). */
  rendition: number;
  /** Media bytes of the chunk. */
  bytes: number;
  /** Capture time of the chunk's last frame (its publish time), ms on the channel's clock. */
  captureMs: number;
  /** When the player had the whole chunk, ms on the page's wall clock. */
  arrivalMs: number;
}

/** What the player knows at a decision. */
export interface PlayerState {
  /** How far the playhead is behind the live edge, s (null before playback starts). */
  latencyS: number | null;
  /** Buffered media ahead of the playhead, s. */
  bufferS: number;
}

export type SwitchReason = 'startup' | 'throughput' | 'dropped' | 'latency' | 'buffer';

export interface AbrDecision {
  /** Rendition index (LIVE_INFO order) wanted from the next group on. */
  rendition: number;
  reason: SwitchReason;
  /** The measured throughput of the group the decision was made on, kbit/s (null: none). */
  throughputKbps: number | null;
  /** Queueing delay of the group's last chunk, ms. */
  queueDelayMs: number | null;
}

export const LIVE_ABR = {
  /** L2A-LL's optimisation horizon (steps to convergence); dash.js's value. */
  HORIZON: 4,
  /** L2A-LL's reactiveness to throughput drops (Q re-calibration); dash.js's value. */
  REACT: 2,
  /** Measured groups decided by throughput alone before the learner takes over. */
  STARTUP_GROUPS: 2,
  /** Start-up: the highest rendition at or below this share of the measured throughput. */
  STARTUP_SAFETY: 0.8,
  /** An up-switch needs throughput ≥ this × the next rendition's bitrate. */
  UP_MARGIN: 1.2,
  /** No up-switch for this many groups after a down-switch by throughput... */
  UP_HOLD_GROUPS: 4,
  /** ...or after one by the guard (loss, queueing, empty buffer: the path was overloaded). */
  GUARD_HOLD_GROUPS: 10,
  /** After a guard, the rendition is below this share of the rate delivered over the last second. */
  GUARD_SAFETY: 0.8,
  /** Queueing delay above this share of the target latency is a step down. */
  LATENCY_SHARE: 0.5,
  /** ...but never below this, ms (the base delay's own jitter). */
  MIN_QUEUE_LIMIT_MS: 60,
  /** The base delay is the minimum of arrival − capture over this window, ms (BBR's min-RTT window). */
  BASE_WINDOW_MS: 10_000,
  /** The delivered rate (what arrived, whatever group) is measured over this window, ms. */
  DELIVERED_WINDOW_MS: 1000,
  /** A group whose every chunk queued longer than this kept the path busy, ms (one frame). */
  QUEUED_MS: 33,
  /** Keyframe rate samples are kept this long, ms. */
  KEY_WINDOW_MS: 3000,
  /**
   * A queueing delay below this is timer granularity, ms: the page stamps a chunk when its event
   * loop gets to it. At 2 ms the 300k rung's keyframes (1.1 kB above a frame) read 4.5 Mbit/s
   * on a 2.75 Mbit/s link with groups on datagrams (session 25: the same block, both campaigns).
   */
  MIN_DELAY_MS: 5,
  /** The guard's queueing delay is the minimum over this many last chunks of a group. */
  GUARD_CHUNKS: 4,
  /** A buffer below this (one frame at 30 fps) is about to stall, s. */
  LOW_BUFFER_S: 1 / 30,
} as const;

/** Which chunks are keyframe bursts, i.e. throughput samples on an idle path. */
export interface KeySampling {
  /** A chunk this many times the base chunk's size is a burst. */
  factor: number;
  /** Only a group's first chunk (its keyframe) counts. */
  groupStartOnly: boolean;
}

/**
 * The live media caps keyframes near 2 frames' worth of bitrate (a 2-frame VBV; docs/media.md,
 * "Live frame sizes"), so a keyframe is ~1.9–2 × a frame: the factor must stay below that, and
 * only a group's first chunk counts, so that a large inter frame is not taken for a burst.
 */
export const KEY_SAMPLING: KeySampling = { factor: 1.5, groupStartOnly: true };
/** What traces recorded on the older media (3–4 × keyframes, no `keySampling`) were decided with. */
export const LEGACY_KEY_SAMPLING: KeySampling = { factor: 3, groupStartOnly: false };

interface GroupMeasure {
  rendition: number;
  bytes: number;
  /** Capture of the first chunk seen + the base delay then: when the path could start. */
  startMs: number;
  lastArrivalMs: number;
  /** Smallest queueing delay of the group's chunks, ms. */
  minQueueMs: number;
  /** Queueing delays of the last GUARD_CHUNKS chunks, ms. */
  recentQueueMs: number[];
}

/** Project y onto the probability simplex (Duchi et al. 2008; arXiv:1101.6081). */
export function projectToSimplex(y: readonly number[]): number[] {
  const sorted = [...y].sort((a, b) => b - a);
  let sum = 0;
  let theta = 0;
  let found = false;
  for (let i = 0; i < sorted.length - 1; i++) {
    sum += sorted[i] as number;
    theta = (sum - 1) / (i + 1);
    if (theta >= (sorted[i + 1] as number)) {
      found = true;
      break;
    }
  }
  if (!found) theta = (sum + (sorted[sorted.length - 1] as number) - 1) / sorted.length;
  return y.map((v) => Math.max(v - theta, 0));
}

const dot = (a: readonly number[], b: readonly number[]): number => a.reduce((s, x, i) => s + x * (b[i] as number), 0);

export class LiveAbr {
  /** Ladder positions in ascending bitrate: order[k] = rendition index. */
  private readonly order: number[];
  /** Bitrates in kbit/s, ascending (index = ladder position k). */
  private readonly kbps: number[];
  private readonly keySampling: KeySampling;
  private readonly groupS: number;
  private readonly targetS: number;
  private readonly groups = new Map<number, GroupMeasure>();
  /** Recent chunks' arrival ms, arrival − capture ms and bytes, for the base delay. */
  private delays: Array<{ arrivalMs: number; delayMs: number; bytes: number }> = [];
  /** Recent chunks (arrival ms, bytes): the delivered rate. */
  private arrivals: Array<{ arrivalMs: number; bytes: number }> = [];
  /** Keyframe rate samples: (arrival ms, kbit/s). */
  private keySamples: Array<{ arrivalMs: number; kbps: number; rendition: number }> = [];
  private measured = 0;
  /** Groups ended since the last down-switch, and how many must pass before an up-switch. */
  private sinceDown = Infinity;
  private hold: number = LIVE_ABR.UP_HOLD_GROUPS;
  /** The throughput of the last group ended, kbit/s (null: nothing to go by). */
  lastThroughputKbps: number | null = null;
  /** Ladder position in use (the last decision). */
  private position: number;
  private w: number[];
  private q = 0;
  private readonly vl: number;
  private readonly alpha: number;
  private readonly wireFactor: (rendition: number) => number;
  /** The wire factors it was built with (for the trace header). */
  readonly wireFactors: readonly number[] | undefined;

  /**
   * @param bitratesBps ladder bitrates by rendition index (LIVE_INFO order); renditions the
   *   player may not use (above the cap, unsupported) are left out by `allowed`
   * @param initial the rendition playing first
   */
  constructor(
    bitratesBps: readonly number[],
    opts: {
      groupS: number;
      targetS: number;
      initial: number;
      allowed?: (index: number) => boolean;
      keySampling?: KeySampling;
      /**
       * Wire bytes per media byte by rendition index (1 when absent): parity on datagrams
       * (`fec`) costs link time that chunk arrivals do not show, most at low bitrates, so rates
       * and the ladder are compared in wire terms.
       */
      wireFactor?: readonly number[];
    },
  ) {
    const allowed = opts.allowed ?? (() => true);
    this.wireFactors = opts.wireFactor;
    const wire = opts.wireFactor ?? [];
    this.wireFactor = (rendition) => wire[rendition] ?? 1;
    this.keySampling = opts.keySampling ?? KEY_SAMPLING;
    this.order = bitratesBps
      .map((b, i) => ({ b, i }))
      .filter(({ i }) => allowed(i))
      .sort((a, b) => a.b - b.b)
      .map(({ i }) => i);
    if (this.order.length === 0) throw new Error('live ABR: no usable rendition');
    this.kbps = this.order.map((i) => ((bitratesBps[i] as number) / 1000) * this.wireFactor(i));
    this.groupS = opts.groupS;
    this.targetS = opts.targetS;
    const at = this.order.indexOf(opts.initial);
    this.position = at < 0 ? 0 : at;
    this.w = this.kbps.map((_, k) => (k === this.position ? 1 : 0));
    this.vl = Math.pow(LIVE_ABR.HORIZON, 0.99);
    this.alpha = Math.max(LIVE_ABR.HORIZON, this.vl * Math.sqrt(LIVE_ABR.HORIZON));
  }

  /** Rendition index of the current choice. */
  get rendition(): number {
    return this.order[this.position] as number;
  }

  /** Still in start-up: fewer than STARTUP_GROUPS groups measured (the rendition is the start-up's guess). */
  get startingUp(): boolean {
    return this.measured < LIVE_ABR.STARTUP_GROUPS;
  }

  /** The renditions the learner chooses from, ascending bitrate. */
  get ladder(): readonly number[] {
    return this.order;
  }

  /** The chunk with the lowest arrival − capture in the window (null before any chunk). */
  private base(): { delayMs: number; bytes: number } | null {
    let best: { delayMs: number; bytes: number } | null = null;
    for (const d of this.delays) if (best === null || d.delayMs < best.delayMs) best = d;
    return best;
  }

  /** Lowest arrival − capture over the window, ms (null before any chunk). */
  baseDelayMs(): number | null {
    return this.base()?.delayMs ?? null;
  }

  onChunk(c: ChunkArrival): void {
    // A keyframe sample is data bytes over the delay they added: the link's rate, parity or
    // not (a chunk is complete before its parity is sent). Group and delivered rates count
    // whole time spans, parity's included, so their bytes are counted on the wire.
    const wireBytes = c.bytes * this.wireFactor(c.rendition);
    const delayMs = c.arrivalMs - c.captureMs;
    this.delays.push({ arrivalMs: c.arrivalMs, delayMs, bytes: c.bytes });
    const horizon = c.arrivalMs - LIVE_ABR.BASE_WINDOW_MS;
    while (this.delays.length > 1 && (this.delays[0] as { arrivalMs: number }).arrivalMs < horizon) this.delays.shift();
    const base = this.base() as { delayMs: number; bytes: number };
    const queueMs = delayMs - base.delayMs;
    let g = this.groups.get(c.group);
    const groupStart = g === undefined;
    if (g === undefined) {
      g = { rendition: c.rendition, bytes: 0, startMs: c.captureMs + base.delayMs, lastArrivalMs: c.arrivalMs, minQueueMs: Infinity, recentQueueMs: [] };
      this.groups.set(c.group, g);
    }
    g.bytes += wireBytes;
    g.lastArrivalMs = Math.max(g.lastArrivalMs, c.arrivalMs);
    g.minQueueMs = Math.min(g.minQueueMs, queueMs);
    g.recentQueueMs.push(queueMs);
    if (g.recentQueueMs.length > LIVE_ABR.GUARD_CHUNKS) g.recentQueueMs.shift();
    const keyframe = groupStart || !this.keySampling.groupStartOnly;
    if (keyframe && c.bytes >= this.keySampling.factor * base.bytes) {
      const kbps = ((c.bytes - base.bytes) * 8) / Math.max(queueMs, LIVE_ABR.MIN_DELAY_MS);
      this.keySamples.push({ arrivalMs: c.arrivalMs, kbps, rendition: c.rendition });
    }
    this.arrivals.push({ arrivalMs: c.arrivalMs, bytes: wireBytes });
    const deliveredHorizon = c.arrivalMs - LIVE_ABR.DELIVERED_WINDOW_MS;
    while (this.arrivals.length > 1 && (this.arrivals[0] as { arrivalMs: number }).arrivalMs < deliveredHorizon) this.arrivals.shift();
    const keyHorizon = c.arrivalMs - LIVE_ABR.KEY_WINDOW_MS;
    while (this.keySamples.length > 1 && (this.keySamples[0] as { arrivalMs: number }).arrivalMs < keyHorizon) this.keySamples.shift();
  }

  /** What arrived over the last DELIVERED_WINDOW_MS, kbit/s (null: nothing yet). */
  deliveredKbps(): number | null {
    if (this.arrivals.length === 0) return null;
    return (this.arrivals.reduce((n, a) => n + a.bytes, 0) * 8) / LIVE_ABR.DELIVERED_WINDOW_MS;
  }

  /**
   * Throughput of a finished group, kbit/s (null: nothing to go by). With `rendition`, only
   * what was measured on that rendition's chunks counts (the group itself, and key samples).
   */
  private throughput(g: GroupMeasure, rendition?: number): number | null {
    if (g.bytes === 0) return null;
    if (g.minQueueMs > LIVE_ABR.QUEUED_MS) {
      if (rendition !== undefined && g.rendition !== rendition) return null;
      return (g.bytes * 8) / Math.max(g.lastArrivalMs - g.startMs, LIVE_ABR.MIN_DELAY_MS);
    }
    const samples = rendition === undefined ? this.keySamples : this.keySamples.filter((k) => k.rendition === rendition);
    if (samples.length === 0) return null;
    return Math.max(...samples.map((k) => k.kbps));
  }

  /**
   * A group's stream ended: `completed` (every chunk arrived) or lost (reset by the server, or
   * given up by the player). Returns the decision for the next group, or null to keep the
   * current rendition.
   */
  onGroupEnd(group: number, completed: boolean, state: PlayerState): AbrDecision | null {
    const g = this.groups.get(group);
    this.groups.delete(group);
    for (const old of [...this.groups.keys()]) if (old < group - 8) this.groups.delete(old);
    const throughputKbps = g ? this.throughput(g) : null;
    this.lastThroughputKbps = throughputKbps;
    const queueMs = g && g.recentQueueMs.length > 0 ? Math.min(...g.recentQueueMs) : null;
    const before = this.position;
    this.sinceDown += 1;

    const guard = this.guard(completed, queueMs, state);
    if (guard !== null) {
      // Lost or queued: the path is saturated, so what arrives is what it carries.
      const delivered = this.deliveredKbps();
      const rate = delivered === null ? null : LIVE_ABR.GUARD_SAFETY * delivered;
      this.stepDown(throughputKbps === null ? rate : rate === null ? throughputKbps : Math.min(throughputKbps, rate));
      const d = this.decision(before, guard, throughputKbps, queueMs);
      if (d !== null) this.hold = LIVE_ABR.GUARD_HOLD_GROUPS;
      return d;
    }
    if (throughputKbps === null || !completed) return null;
    this.measured += 1;
    if (this.measured <= LIVE_ABR.STARTUP_GROUPS) {
      this.position = this.highestBelow(LIVE_ABR.STARTUP_SAFETY * throughputKbps);
      this.w = this.kbps.map((_, k) => (k === this.position ? 1 : 0));
      this.q = this.vl;
      return this.decision(before, 'startup', throughputKbps, queueMs);
    }
    this.learn(throughputKbps, g ? this.throughput(g, this.rendition) : null);
    return this.decision(before, 'throughput', throughputKbps, queueMs);
  }

  private guard(completed: boolean, queueMs: number | null, state: PlayerState): SwitchReason | null {
    if (!completed) return 'dropped';
    const limit = Math.max(LIVE_ABR.MIN_QUEUE_LIMIT_MS, LIVE_ABR.LATENCY_SHARE * this.targetS * 1000);
    if (queueMs !== null && queueMs > limit) return 'latency';
    if (state.latencyS !== null && state.latencyS > this.targetS && state.bufferS < LIVE_ABR.LOW_BUFFER_S) return 'buffer';
    return null;
  }

  private decision(before: number, reason: SwitchReason, throughputKbps: number | null, queueMs: number | null): AbrDecision | null {
    if (this.position === before) return null;
    if (this.position < before) {
      this.sinceDown = 0;
      this.hold = LIVE_ABR.UP_HOLD_GROUPS;
    }
    return {
      rendition: this.rendition,
      reason,
      throughputKbps: throughputKbps === null ? null : Math.round(throughputKbps),
      queueDelayMs: queueMs === null ? null : Math.round(queueMs),
    };
  }

  /** The highest ladder position whose bitrate is at most `kbps` (0 if none). */
  private highestBelow(kbps: number): number {
    let k = 0;
    this.kbps.forEach((b, i) => {
      if (b <= kbps) k = i;
    });
    return k;
  }

  /** One step down, or to below `kbps` (the path's rate) if that is lower; Q raised. */
  private stepDown(throughputKbps: number | null): void {
    let k = Math.max(0, this.position - 1);
    if (throughputKbps !== null) k = Math.min(k, this.highestBelow(throughputKbps));
    this.position = k;
    this.w = this.kbps.map((_, i) => (i === k ? 1 : 0));
    this.q = LIVE_ABR.REACT * Math.max(this.vl, this.q);
  }

  /** The L2A-LL step on one group's throughput, and the part of it measured on the rendition playing (kbit/s). */
  private learn(throughputKbps: number, playingKbps: number | null): void {
    const thr = Math.max(throughputKbps, 1);
    const v = this.groupS;
    const prev = this.w;
    let sign = 1;
    const raw = this.kbps.map((b, i) => {
      if (b > thr) sign = -1;
      return (prev[i] as number) + sign * (v / (2 * this.alpha)) * ((this.q + this.vl) * (b / thr));
    });
    const w = projectToSimplex(raw);
    const diff = w.map((x, i) => x - (prev[i] as number));
    this.w = w;
    this.q = Math.max(0, this.q - v + (v * (dot(this.kbps, w) + dot(this.kbps, diff))) / thr);
    const expected = dot(w, this.kbps);
    let k = 0;
    this.kbps.forEach((b, i) => {
      if (Math.abs(b - expected) < Math.abs((this.kbps[k] as number) - expected)) k = i;
    });
    if (k > this.position) {
      // Cautious ascent: one step, with headroom for the next rendition measured on the one
      // playing, not right after a drop.
      const next = this.kbps[this.position + 1] as number;
      const up = playingKbps !== null && next * LIVE_ABR.UP_MARGIN <= playingKbps && this.sinceDown >= this.hold;
      k = up ? this.position + 1 : this.position;
    } else if (k < this.position && (this.kbps[this.position] as number) <= thr) {
      k = this.position; // the path still carries the current rendition
    }
    if ((this.kbps[k] as number) >= thr) this.q = LIVE_ABR.REACT * Math.max(this.vl, this.q);
    this.position = k;
  }
}

/** What live ABR was told, in order: a recorded arrival trace (`window.pccstream.liveAbrTrace()`). */
export type AbrTraceEvent =
  | ({ type: 'chunk' } & ChunkArrival)
  | { type: 'end'; group: number; completed: boolean; latencyS: number | null; bufferS: number; arrivalMs: number };

/** The trace's header: what a replay needs to build the same LiveAbr. */
export interface AbrTrace {
  /** Ladder bitrates by rendition index (LIVE_INFO order). */
  bitratesBps: number[];
  /** Renditions live ABR could choose (the others were above the cap or unsupported). */
  allowed: number[];
  initial: number;
  groupS: number;
  targetS: number;
  events: AbrTraceEvent[];
  /** The keyframe-burst rule the run used (absent: LEGACY_KEY_SAMPLING, traces before it). */
  keySampling?: KeySampling;
  /** Wire bytes per media byte by rendition index (absent: 1, groups on streams). */
  wireFactor?: number[];
}

/** Feed a recorded trace to a fresh LiveAbr: its decisions, each with the group it was made on. */
export function replayTrace(trace: AbrTrace): Array<AbrDecision & { group: number; arrivalMs: number }> {
  const allowed = new Set(trace.allowed);
  const abr = new LiveAbr(trace.bitratesBps, { groupS: trace.groupS, targetS: trace.targetS, initial: trace.initial, allowed: (i) => allowed.has(i), keySampling: trace.keySampling ?? LEGACY_KEY_SAMPLING, wireFactor: trace.wireFactor });
  const out: Array<AbrDecision & { group: number; arrivalMs: number }> = [];
  for (const e of trace.events) {
    if (e.type === 'chunk') {
      abr.onChunk(e);
    } else {
      const d = abr.onGroupEnd(e.group, e.completed, { latencyS: e.latencyS, bufferS: e.bufferS });
      if (d !== null) out.push({ ...d, group: e.group, arrivalMs: e.arrivalMs });
    }
  }
  return out;
}

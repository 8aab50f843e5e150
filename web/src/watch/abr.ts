/**
 * mode=abr: throughput rule as the floor, BOLA on top (in the spirit of dash.js "DYNAMIC"
 * and BOLA-O), pure so it is unit-tested on synthetic inputs.
 *
 * Inputs per decision: the ladder (bitrates, ascending), the media scheduled ahead of the
 * playhead (seconds), the throughput estimate (bit/s, or null before the first download),
 * the rendition of the previous segment, and the buffer target.
 *
 * 1. No throughput sample yet → the lowest rendition (start safe; the first segment
 *    measures the path).
 * 2. Throughput rule: `tput` = the highest rendition with bitrate ≤ SAFETY × throughput
 *    (SAFETY = 0.9; throughput = harmonic mean of the last 5 segments), else the lowest.
 * 3. Buffer below `lowBufferS` (= max(one segment, 30 % of the target)) → `tput`.
 * 4. Otherwise BOLA (Spiteri et al., "BOLA: Near-Optimal Bitrate Adaptation for Online
 *    Videos"; parameterised as dash.js does, in seconds): utilities u_m = ln(b_m / b_0) + 1,
 *    gp = (u_max − 1) / (target / lowBufferS − 1), Vp = lowBufferS / gp, and
 *    bola = argmax_m (Vp·(u_m + gp) − buffer) / b_m. The lowest rendition wins at
 *    buffer ≤ lowBufferS and the highest by the buffer target; the choice never decreases
 *    as the buffer grows.
 * 5. Combination: the throughput rule is the floor (a buffer that is still filling must not
 *    pull the choice below what the path sustains — that only adds switches), and BOLA may
 *    hold a rendition above it: if bola > tput the choice is max(tput, min(bola, previous))
 *    (BOLA-O: the buffer lets us *keep* a rendition the throughput does not sustain while
 *    it lasts, never switch *up* to one). So: down-switches come from falling throughput or
 *    a draining buffer, up-switches only from measured throughput.
 */

export const SAFETY = 0.9;

export interface AbrInput {
  /** Ladder bitrates in bit/s, ascending. */
  bitratesBps: readonly number[];
  bufferS: number;
  throughputBps: number | null;
  /** Rendition of the previous segment, or null for the first segment. */
  previous: number | null;
  bufferTargetS: number;
  segmentSeconds: number;
}

export interface AbrDecision {
  index: number;
  reason: 'startup' | 'throughput' | 'bola-hold' | 'single';
}

export function throughputIndex(bitratesBps: readonly number[], throughputBps: number): number {
  let index = 0;
  bitratesBps.forEach((b, i) => {
    if (b <= SAFETY * throughputBps) index = i;
  });
  return index;
}

export function lowBufferS(bufferTargetS: number, segmentSeconds: number): number {
  return Math.max(segmentSeconds, 0.3 * bufferTargetS);
}

export interface BolaParams {
  utilities: number[];
  gp: number;
  Vp: number;
}

/** Null when BOLA does not apply (a single rendition, or a target not above the low buffer). */
export function bolaParams(bitratesBps: readonly number[], bufferTargetS: number, minBufferS: number): BolaParams | null {
  const b0 = bitratesBps[0];
  if (b0 === undefined || bitratesBps.length < 2 || bufferTargetS <= minBufferS) return null;
  const utilities = bitratesBps.map((b) => Math.log(b / b0) + 1);
  const uMax = Math.max(...utilities);
  if (uMax <= 1) return null;
  const gp = (uMax - 1) / (bufferTargetS / minBufferS - 1);
  return { utilities, gp, Vp: minBufferS / gp };
}

export function bolaIndex(bitratesBps: readonly number[], bufferS: number, params: BolaParams): number {
  let best = 0;
  let bestScore = -Infinity;
  bitratesBps.forEach((b, i) => {
    const u = params.utilities[i] ?? 1;
    const score = (params.Vp * (u + params.gp) - bufferS) / b;
    if (score >= bestScore) {
      best = i;
      bestScore = score;
    }
  });
  return best;
}

export function chooseRendition(input: AbrInput): AbrDecision {
  const { bitratesBps, bufferS, throughputBps, previous } = input;
  if (bitratesBps.length <= 1) return { index: 0, reason: 'single' };
  if (throughputBps === null) return { index: 0, reason: 'startup' };
  const tput = throughputIndex(bitratesBps, throughputBps);
  const low = lowBufferS(input.bufferTargetS, input.segmentSeconds);
  const params = bolaParams(bitratesBps, input.bufferTargetS, low);
  if (params === null || bufferS < low) return { index: tput, reason: 'throughput' };
  const bola = bolaIndex(bitratesBps, bufferS, params);
  if (bola <= tput) return { index: tput, reason: 'throughput' };
  const held = Math.max(tput, Math.min(bola, previous ?? 0));
  return { index: held, reason: held > tput ? 'bola-hold' : 'throughput' };
}

/**
 * Throughput estimate: the harmonic mean of the last `window` segment throughputs (robust
 * to a single fast outlier, as in FESTIVE/MPC), each sample = body bytes × 8 / (request
 * start → last byte). Null before the first sample.
 */
export class ThroughputEstimator {
  private readonly samples: number[] = [];

  constructor(private readonly window = 5) {}

  add(throughputBps: number): void {
    if (!(throughputBps > 0) || !Number.isFinite(throughputBps)) return;
    this.samples.push(throughputBps);
    if (this.samples.length > this.window) this.samples.shift();
  }

  estimate(): number | null {
    if (this.samples.length === 0) return null;
    return this.samples.length / this.samples.reduce((sum, x) => sum + 1 / x, 0);
  }
}

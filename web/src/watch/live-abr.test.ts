import { describe, expect, it } from 'vitest';
import { wireFactor } from '../protocol';
import { LEGACY_KEY_SAMPLING, LIVE_ABR, LiveAbr, projectToSimplex, type AbrDecision, type KeySampling } from './live-abr';

const LADDER = [300_000, 750_000, 1_500_000, 2_500_000, 3_000_000];
const FPS = 30;
const F = 15;
const FRAME_MS = 1000 / FPS;
const GROUP_MS = F * FRAME_MS;

/**
 * A closed loop on a simulated bottleneck: frame j of group g (a keyframe 4× the others) is
 * captured at (gF + j)/30 s, queued FIFO behind what is still being sent at `capacityKbps(t)`,
 * and arrives one-way `delayMs` after it leaves. The rendition of each group is the last
 * decision made before the group started (the server switches at group boundaries).
 */
function simulate(capacityKbps: (tMs: number) => number, seconds: number, opts: { targetS?: number; allowed?: (i: number) => boolean; delayMs?: number; keyRatio?: number; keySampling?: KeySampling; parityK?: number; abrKnowsParity?: boolean } = {}) {
  const targetS = opts.targetS ?? 0.3;
  const delayMs = opts.delayMs ?? 20;
  const keyRatio = opts.keyRatio ?? 4;
  // Datagrams with parity (`parityK`): each chunk's parity follows its data on the link.
  const parity = (bytes: number): number => (opts.parityK === undefined ? 0 : bytes * (wireFactor(bytes, opts.parityK) - 1));
  const wire = opts.parityK !== undefined && opts.abrKnowsParity !== false ? LADDER.map((b) => wireFactor(b / 8 / FPS, opts.parityK as number)) : undefined;
  const abr = new LiveAbr(LADDER, { groupS: GROUP_MS / 1000, targetS, initial: 0, ...(opts.allowed ? { allowed: opts.allowed } : {}), ...(opts.keySampling ? { keySampling: opts.keySampling } : {}), ...(wire ? { wireFactor: wire } : {}) });
  const decisions: Array<AbrDecision & { atMs: number }> = [];
  const renditions: number[] = [];
  let linkFreeMs = 0;
  let rendition = abr.rendition;
  let maxQueueMs = 0;
  const groups = Math.round((seconds * 1000) / GROUP_MS);
  for (let g = 0; g < groups; g++) {
    renditions.push(rendition);
    const bitrate = LADDER[rendition] as number;
    const meanBytes = bitrate / 8 / FPS;
    let lastArrival = 0;
    for (let j = 0; j < F; j++) {
      const bytes = Math.round(j === 0 ? keyRatio * meanBytes : (meanBytes * (F - keyRatio)) / (F - 1));
      const captureMs = (g * F + j) * FRAME_MS;
      const start = Math.max(captureMs, linkFreeMs);
      linkFreeMs = start + (bytes * 8) / capacityKbps(start);
      const arrivalMs = linkFreeMs + delayMs;
      linkFreeMs += (parity(bytes) * 8) / capacityKbps(linkFreeMs);
      maxQueueMs = Math.max(maxQueueMs, arrivalMs - captureMs - delayMs);
      abr.onChunk({ group: g, rendition, bytes, captureMs, arrivalMs });
      lastArrival = arrivalMs;
    }
    const latencyS = (lastArrival - (g + 1) * GROUP_MS) / 1000 + targetS;
    const d = abr.onGroupEnd(g, true, { latencyS, bufferS: Math.max(0, targetS - latencyS + targetS) });
    if (d !== null) {
      decisions.push({ ...d, atMs: lastArrival });
      rendition = d.rendition;
    }
  }
  return { decisions, renditions, maxQueueMs };
}

const kbps = (r: number): number => (LADDER[r] as number) / 1000;

describe('projectToSimplex', () => {
  it('keeps a distribution and projects others onto the simplex', () => {
    expect(projectToSimplex([0, 1, 0])).toEqual([0, 1, 0]);
    const p = projectToSimplex([0.5, 1.2, -0.3]);
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(p.every((x) => x >= 0)).toBe(true);
    expect(p).toEqual([expect.closeTo(0.15, 12), expect.closeTo(0.85, 12), 0]);
  });
});

describe('LiveAbr on a simulated bottleneck', () => {
  it('climbs one step at a time to the top with a fast link, and stays there', () => {
    const { decisions, renditions } = simulate(() => 20_000, 20);
    expect(renditions.at(-1)).toBe(4);
    const ups = decisions.filter((d) => d.reason === 'throughput');
    for (let i = 1; i < ups.length; i++) expect((ups[i] as AbrDecision).rendition).toBeGreaterThan((ups[i - 1] as AbrDecision).rendition);
    expect(decisions.filter((d) => ['latency', 'dropped', 'buffer'].includes(d.reason))).toEqual([]);
    // the last 10 s on one rendition
    expect(new Set(renditions.slice(-20)).size).toBe(1);
  });

  it('respects the ladder cap (allowed renditions)', () => {
    const { renditions } = simulate(() => 20_000, 20, { allowed: (i) => i <= 3 });
    expect(Math.max(...renditions)).toBe(3);
  });

  it('steps down within 1.5 s when the link drops below the bitrate, and the queue drains', () => {
    const dropAt = 10_000;
    const { decisions, renditions } = simulate((t) => (t < dropAt ? 6000 : 1200), 20);
    expect(kbps(renditions[Math.floor(dropAt / GROUP_MS) - 1] as number)).toBeGreaterThanOrEqual(2500);
    const down = decisions.find((d) => d.atMs > dropAt && d.rendition < 3);
    expect(down).toBeDefined();
    expect((down as { atMs: number }).atMs - dropAt).toBeLessThan(1500);
    // settles on a rendition the 1.2 Mbit/s link carries
    for (const r of renditions.slice(-10)) expect(kbps(r)).toBeLessThanOrEqual(750);
  });

  it('holds a rendition below the capacity on video-rttflap-like capacity (2.75 Mbit/s)', () => {
    const { renditions, maxQueueMs } = simulate(() => 2750, 30, { allowed: (i) => i <= 3 });
    const tail = renditions.slice(-40);
    for (const r of tail) expect(kbps(r)).toBeLessThan(2750 / LIVE_ABR.UP_MARGIN + 1);
    expect(maxQueueMs).toBeLessThan(300);
  });

  it('with parity on datagrams, settles on what fits the link parity included', () => {
    const { renditions, maxQueueMs } = simulate(() => 2750, 60, { parityK: 8 });
    for (const r of renditions.slice(-40)) expect(kbps(r) * wireFactor((LADDER[r] as number) / 8 / FPS, 8)).toBeLessThan(2750);
    expect(maxQueueMs).toBeLessThan(150);
  });

  it('counts a queued group on the wire (parity took link time), but not a keyframe sample (its data went first)', () => {
    const measure = (wire?: number[]): number | null => {
      const abr = new LiveAbr(LADDER, { groupS: 0.5, targetS: 1, initial: 0, ...(wire ? { wireFactor: wire } : {}) });
      abr.onChunk({ group: 1, rendition: 0, bytes: 1000, captureMs: 0, arrivalMs: 20 });
      for (let j = 0; j < 15; j++) abr.onChunk({ group: 2, rendition: 0, bytes: 2500, captureMs: 500 + j * FRAME_MS, arrivalMs: 600 + j * 50 });
      abr.onGroupEnd(2, true, { latencyS: 0.5, bufferS: 0.5 });
      return abr.lastThroughputKbps;
    };
    expect(measure([1.5, 1, 1, 1, 1])).toBeCloseTo(1.5 * (measure() as number), 6);
    // An idle path: the keyframe's data bytes over the delay they added, whatever the parity.
    const keyframe = (wire?: number[]): number | null => {
      const abr = new LiveAbr(LADDER, { groupS: 0.5, targetS: 1, initial: 0, ...(wire ? { wireFactor: wire } : {}) });
      abr.onChunk({ group: 1, rendition: 0, bytes: 1000, captureMs: 0, arrivalMs: 20 });
      abr.onChunk({ group: 2, rendition: 0, bytes: 4000, captureMs: 500, arrivalMs: 530 });
      abr.onGroupEnd(2, true, { latencyS: 0.5, bufferS: 0.5 });
      return abr.lastThroughputKbps;
    };
    expect(keyframe([1.5, 1, 1, 1, 1])).toBeCloseTo(keyframe() as number, 6);
  });

  it('reads a small keyframe that came within timer granularity of the base chunk as no faster than MIN_DELAY_MS allows', () => {
    // The 300k rung: 1.1 kB more than a frame, arriving 1 ms after one (page and datagram
    // batching); taken at face value that is a 9 Mbit/s link.
    const abr = new LiveAbr(LADDER, { groupS: 0.5, targetS: 0.3, initial: 0 });
    abr.onChunk({ group: 1, rendition: 0, bytes: 1250, captureMs: 0, arrivalMs: 20 });
    abr.onChunk({ group: 2, rendition: 0, bytes: 2381, captureMs: 500, arrivalMs: 521 });
    abr.onGroupEnd(2, true, { latencyS: 0.3, bufferS: 0.1 });
    expect(abr.lastThroughputKbps).toBeCloseTo(((2381 - 1250) * 8) / LIVE_ABR.MIN_DELAY_MS, 6);
    expect(abr.lastThroughputKbps).toBeLessThan(2000);
  });

  it('steps up once on a keyframe sample that read too high, and measures the new rendition before the next step', () => {
    // The live ladder up to 2500k on a 1.7 Mbit/s link (20 ms one way), keyframes 2 × a frame;
    // a group lost at 8 steps down and raises Q. Group 20's 750k keyframe reads 3.6 Mbit/s (its
    // delay 3 ms over the base, as when the path's delay falls under it), a sample that stays
    // in the 3 s window for six groups.
    const ladder = [300_000, 750_000, 1_500_000, 2_000_000, 2_500_000];
    const capKbps = 1700;
    const abr = new LiveAbr(ladder, { groupS: GROUP_MS / 1000, targetS: 0.3, initial: 1 });
    const decisions: Array<AbrDecision & { group: number }> = [];
    for (let g = 0; g < 30; g++) {
      const rendition = abr.rendition;
      const mean = (ladder[rendition] as number) / 8 / FPS;
      const inter = Math.round((mean * (F - 2)) / (F - 1));
      for (let j = 0; j < F; j++) {
        const bytes = j === 0 ? Math.round(2 * mean) : inter;
        const captureMs = (g * F + j) * FRAME_MS;
        const queueMs = j > 0 ? 0 : g === 20 ? 3 : ((bytes - inter) * 8) / capKbps;
        abr.onChunk({ group: g, rendition, bytes, captureMs, arrivalMs: captureMs + 20 + (inter * 8) / capKbps + queueMs });
      }
      const d = abr.onGroupEnd(g, g !== 8, { latencyS: 0.1, bufferS: 0.1 });
      if (d !== null) decisions.push({ ...d, group: g });
    }
    // One step up on the sample (750k → 1500k, a probe); 1500k's own keyframes then read
    // 1.7 Mbit/s, short of 1.2 × 2000k, so it stays. Measured on any rendition, the sample
    // also took 1500k → 2000k five groups later, and 2000k had to step back down.
    expect(decisions.filter((d) => d.group >= 20).map((d) => [d.group, d.rendition, d.reason])).toEqual([[20, 2, 'throughput']]);
  });

  it('steps down at once on a lost group or a queue above half the target', () => {
    const abr = new LiveAbr(LADDER, { groupS: 0.5, targetS: 0.3, initial: 3 });
    expect(abr.onGroupEnd(7, false, { latencyS: 0.5, bufferS: 0 })).toMatchObject({ rendition: 2, reason: 'dropped' });
    // a group whose last chunks sat 200 ms in a queue (base delay 20 ms)
    abr.onChunk({ group: 8, rendition: 2, bytes: 10_000, captureMs: 0, arrivalMs: 20 });
    for (let j = 1; j <= 4; j++) abr.onChunk({ group: 8, rendition: 2, bytes: 10_000, captureMs: 33 * j, arrivalMs: 33 * j + 220 });
    // 50 kB arrived in the last second (400 kbit/s): below 750k, so down to 300k at once
    expect(abr.deliveredKbps()).toBe(400);
    expect(abr.onGroupEnd(8, true, { latencyS: 0.4, bufferS: 0.1 })).toMatchObject({ rendition: 0, reason: 'latency', queueDelayMs: 200 });
  });

  it('measures throughput with the idle gaps removed', () => {
    const abr = new LiveAbr(LADDER, { groupS: 0.5, targetS: 1, initial: 0 });
    // a small frame sets the base delay: 20 ms for 1250 bytes
    abr.onChunk({ group: 1, rendition: 0, bytes: 1250, captureMs: 0, arrivalMs: 20 });
    // a keyframe on an idle path: 8 ms more for its 5000 extra bytes (5 Mbit/s)
    abr.onChunk({ group: 2, rendition: 0, bytes: 6250, captureMs: 100, arrivalMs: 128 });
    // a later keyframe the page read 30 ms late: a lower sample, not the throughput
    abr.onChunk({ group: 2, rendition: 0, bytes: 6250, captureMs: 600, arrivalMs: 658 });
    abr.onChunk({ group: 2, rendition: 0, bytes: 1000, captureMs: 1100, arrivalMs: 1121 });
    const d = abr.onGroupEnd(2, true, { latencyS: 0.5, bufferS: 0.5 });
    // the idle path's best keyframe sample, not the source's pace
    expect(d).toMatchObject({ reason: 'startup', throughputKbps: 5000, queueDelayMs: 1 });
  });

  it('measures a group that queued throughout from its first capture to its last arrival', () => {
    const abr = new LiveAbr(LADDER, { groupS: 0.5, targetS: 1, initial: 0 });
    abr.onChunk({ group: 1, rendition: 0, bytes: 1000, captureMs: 0, arrivalMs: 20 });
    // group 2: 15 chunks of 2500 bytes, each captured every 33⅓ ms, each arriving 50 ms after
    // the one before (a 400 kbit/s path): every chunk queued
    for (let j = 0; j < 15; j++) abr.onChunk({ group: 2, rendition: 0, bytes: 2500, captureMs: 500 + j * FRAME_MS, arrivalMs: 600 + j * 50 });
    abr.onGroupEnd(2, true, { latencyS: 0.5, bufferS: 0.5 });
    // 37.5 kB from 520 ms (capture + base delay) to 1300 ms
    expect(abr.lastThroughputKbps).toBeCloseTo((37_500 * 8) / 780, 6);
    expect(abr.rendition).toBe(0);
  });

  it('is starting up until STARTUP_GROUPS groups are measured (the player keeps its playout delay at the target meanwhile)', () => {
    const abr = new LiveAbr(LADDER, { groupS: 0.5, targetS: 0.3, initial: 0 });
    expect(abr.startingUp).toBe(true);
    // (the first group's keyframe has no smaller chunk before it to measure against)
    for (let g = 0; g < LIVE_ABR.STARTUP_GROUPS + 1; g++) {
      expect(abr.startingUp).toBe(true);
      for (let j = 0; j < F; j++) abr.onChunk({ group: g, rendition: 0, bytes: j === 0 ? 8000 : 1000, captureMs: (g * F + j) * FRAME_MS, arrivalMs: (g * F + j) * FRAME_MS + (j === 0 ? 30 : 20) });
      abr.onGroupEnd(g, true, { latencyS: 0.3, bufferS: 0.2 });
    }
    expect(abr.startingUp).toBe(false);
  });
});

describe('LiveAbr on the live media with capped keyframes (2-frame VBV: keyframe ≈ 2 × a frame)', () => {
  it('still measures the idle path from its keyframes and climbs to the top rung', () => {
    const { renditions } = simulate(() => 6000, 20, { keyRatio: 2 });
    expect(kbps(renditions.at(-1) as number)).toBe(3000);
  });

  it('the older rule (3 × the base chunk) would see no burst there and never climb', () => {
    const { renditions } = simulate(() => 6000, 20, { keyRatio: 2, keySampling: LEGACY_KEY_SAMPLING });
    expect(Math.max(...renditions)).toBe(0);
  });
});


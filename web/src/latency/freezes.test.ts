import { describe, expect, it } from 'vitest';
import { countFreezes, FreezeCounter } from './freezes';

/** Render times (ms) of `n` frames every `stepMs`, starting at `t0`. */
function steady(n: number, stepMs: number, t0 = 0): number[] {
  return Array.from({ length: n }, (_, i) => t0 + i * stepMs);
}

describe('freezes by the WebRTC rule', () => {
  it('counts nothing at a steady 30 fps', () => {
    expect(countFreezes(steady(300, 1000 / 30))).toEqual({ freezeCount: 0, totalFreezesDurationMs: 0 });
  });

  it('counts a 200 ms gap at 30 fps (≥ mean + 150 ms) once, with its duration', () => {
    const a = steady(60, 1000 / 30);
    const last = a.at(-1) as number;
    const b = steady(60, 1000 / 30, last + 200);
    const freezes = countFreezes([...a, ...b]);
    expect(freezes.freezeCount).toBe(1);
    expect(freezes.totalFreezesDurationMs).toBeCloseTo(200, 6);
  });

  it('does not count a 150 ms gap at 30 fps (below mean + 150 ms), which the stall rule may', () => {
    const a = steady(60, 1000 / 30);
    const b = steady(60, 1000 / 30, (a.at(-1) as number) + 150);
    expect(countFreezes([...a, ...b]).freezeCount).toBe(0);
  });

  it('at 5 fps needs 3 × the mean (600 ms), not mean + 150', () => {
    const a = steady(20, 200);
    expect(countFreezes([...a, ...steady(5, 200, (a.at(-1) as number) + 500)]).freezeCount).toBe(0);
    expect(countFreezes([...a, ...steady(5, 200, (a.at(-1) as number) + 600)]).freezeCount).toBe(1);
  });

  it('needs 5 intervals before it judges', () => {
    expect(countFreezes([0, 33, 66, 99, 1000]).freezeCount).toBe(0);
    expect(countFreezes([0, 33, 66, 99, 132, 165, 1000]).freezeCount).toBe(1);
  });

  it('ignores repeated or out-of-order times', () => {
    const c = new FreezeCounter();
    for (const t of [0, 33, 33, 66, 50, 99, 132, 165, 198]) c.onFrame(t);
    expect(c.snapshot().freezeCount).toBe(0);
  });

  it('counts the late keyframe of a recorded 0.5 s live group (rendered-frame trace)', () => {
    // A recorded shape: frames every 33 ms, then a group's keyframe arriving 190 ms after
    // the previous frame (the playout delay short of it), then the group's frames in a burst.
    const trace = [...steady(45, 33.3), 1655, 1662, 1670, 1690, ...steady(40, 33.3, 1723)];
    const freezes = countFreezes(trace);
    expect(freezes.freezeCount).toBe(1);
    expect(freezes.totalFreezesDurationMs).toBeCloseTo(1655 - 44 * 33.3, 6);
  });
});

import { describe, expect, it } from 'vitest';
import { DroppedFrameAttribution, STALL_DROP_WINDOW_MS } from './dropped-frames';

describe('DroppedFrameAttribution', () => {
  it('charges frames dropped during a stall and just after it to the stall', () => {
    const a = new DroppedFrameAttribution();
    a.sample(0, 0, false);
    a.sample(25, 2, false); // playing smoothly: CPU
    a.sample(50, 2, true);
    a.sample(75, 3, true); // during the stall
    a.sample(100, 3, false);
    a.sample(100 + STALL_DROP_WINDOW_MS - 25, 6, false); // the resume's catch-up
    a.sample(100 + STALL_DROP_WINDOW_MS + 200, 7, false); // long after: CPU again
    expect(a.droppedNearStalls).toBe(4);
  });

  it('is null until the browser reports a count, and ignores unknown samples', () => {
    const a = new DroppedFrameAttribution();
    a.sample(0, null, true);
    expect(a.droppedNearStalls).toBeNull();
    a.sample(25, 5, true); // the first count is a baseline, not an increment
    a.sample(50, null, false);
    a.sample(75, 6, false);
    expect(a.droppedNearStalls).toBe(1);
  });

  it('never counts a counter that went backwards', () => {
    const a = new DroppedFrameAttribution();
    a.sample(0, 4, true);
    a.sample(25, 2, true);
    a.sample(50, 3, true);
    expect(a.droppedNearStalls).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import type { LiveChunk } from '../protocol';
import { GroupScheduler, MAX_QUEUED_GROUPS } from './live-groups';

const F = 15;
const FRAME_S = 1 / 30;

function chunk(frame: number): LiveChunk {
  return { firstFrame: frame, frameCount: 1, data: new Uint8Array([frame]) };
}

function setup(): { s: GroupScheduler; abandoned: number[]; drain: () => string[] } {
  const s = new GroupScheduler((g) => g * F * FRAME_S, FRAME_S);
  const abandoned: number[] = [];
  s.onAbandon = (g) => abandoned.push(g);
  const drain = (): string[] => {
    const out: string[] = [];
    for (let item = s.take(); item !== null; item = s.take()) out.push(`${item.group}:${item.chunk.firstFrame}`);
    return out;
  };
  return { s, abandoned, drain };
}

/** A whole group, FIN included. */
function fullGroup(s: GroupScheduler, g: number, frames = F): void {
  s.addGroup(g);
  for (let j = 0; j < frames; j++) s.addChunk(g, chunk(j));
  s.endGroup(g);
}

describe('GroupScheduler', () => {
  it('feeds groups in sequence, chunk by chunk as they arrive', () => {
    const { s, drain } = setup();
    expect(drain()).toEqual([]);
    expect(s.nextNeededS()).toBeNull();
    s.addGroup(10);
    s.addChunk(10, chunk(0));
    expect(drain()).toEqual(['10:0']);
    expect(s.nextNeededS()).toBeCloseTo(10 * 0.5 + FRAME_S, 9);
    s.addChunk(10, chunk(1));
    // the next group starts before this one ends: it waits
    s.addGroup(11);
    s.addChunk(11, chunk(0));
    expect(drain()).toEqual(['10:1']);
    for (let j = 2; j < F; j++) s.addChunk(10, chunk(j));
    s.endGroup(10);
    const out = drain();
    expect(out.slice(-2)).toEqual(['10:14', '11:0']);
    expect(s.current).toBe(11);
    expect(s.stats).toEqual({ received: 2, completed: 1, dropped: 0, skips: 0 });
  });

  it('waits for the next group rather than skipping it while it is merely late', () => {
    const { s, drain } = setup();
    fullGroup(s, 1);
    drain();
    s.addGroup(3);
    s.addChunk(3, chunk(0));
    expect(drain()).toEqual([]);
    expect(s.nextNeededS()).toBeCloseTo(1, 9);
    expect(s.skipTarget()).toBe(3);
    fullGroup(s, 2);
    expect(drain()).toEqual([...Array.from({ length: F }, (_, j) => `2:${j}`), '3:0']);
    expect(s.stats.dropped).toBe(0);
  });

  it('a reset group is abandoned: without a target position, the newest group with its start in is fed next', () => {
    const { s, abandoned, drain } = setup();
    s.addGroup(5);
    s.addChunk(5, chunk(0));
    s.addChunk(5, chunk(1));
    drain();
    fullGroup(s, 6, 7); // 6 has its start; still open
    s.addGroup(7);
    s.addChunk(7, chunk(0));
    s.addGroup(8); // no chunk yet
    s.failGroup(5, 'superseded');
    expect(drain()).toEqual(['7:0']);
    expect(abandoned).toEqual([5, 6]);
    expect(s.stats).toMatchObject({ received: 4, completed: 0, dropped: 2, skips: 1 });
    // a late chunk of an abandoned group, or its stream arriving again, is ignored
    s.addChunk(6, chunk(7));
    expect(s.addGroup(6)).toBe(false);
    expect(drain()).toEqual([]);
  });

  it('with a target position, skips to the group holding it (or the first after it), not the newest', () => {
    const { s, abandoned, drain } = setup();
    s.addGroup(5);
    s.addChunk(5, chunk(0));
    drain();
    for (const g of [6, 7, 8]) {
      s.addGroup(g);
      s.addChunk(g, chunk(0));
    }
    s.targetPositionS = 7 * 0.5 + 0.2; // inside group 7
    s.failGroup(5, 'superseded');
    expect(drain()).toEqual(['7:0']);
    expect(abandoned).toEqual([5, 6]);
    expect(s.stats.dropped).toBe(2);
    // every candidate ends before the position: the newest
    s.addGroup(9);
    s.addChunk(9, chunk(0));
    s.addGroup(10);
    s.addChunk(10, chunk(0));
    s.targetPositionS = 20;
    expect(s.skipForward()).toBe(true);
    expect(s.current).toBe(10);
    // a position before every candidate: the oldest candidate
    s.addGroup(11);
    s.addChunk(11, chunk(0));
    s.addGroup(12);
    s.addChunk(12, chunk(0));
    s.targetPositionS = 1;
    expect(s.skipForward()).toBe(true);
    expect(s.current).toBe(11);
  });

  it('a reset group with no newer start waits, then takes the first start to arrive', () => {
    const { s, drain } = setup();
    s.addGroup(5);
    s.addChunk(5, chunk(0));
    drain();
    s.failGroup(5, 'superseded');
    expect(drain()).toEqual([]);
    s.addGroup(7);
    s.addChunk(7, chunk(0));
    expect(drain()).toEqual(['7:0']);
    expect(s.stats.dropped).toBe(2); // 5 reset, 6 never seen
  });

  it('a next group that failed, or does not start at frame 0, is skipped', () => {
    const { s, drain } = setup();
    fullGroup(s, 1);
    drain();
    s.addGroup(2);
    s.addChunk(2, chunk(4)); // joined mid-group: no keyframe
    s.addGroup(3);
    s.addChunk(3, chunk(0));
    expect(drain()).toEqual(['3:0']);
    expect(s.stats).toMatchObject({ completed: 1, dropped: 1 });
  });

  it('skipForward abandons a late group only when a newer start is in', () => {
    const { s, abandoned, drain } = setup();
    s.addGroup(20);
    s.addChunk(20, chunk(0));
    drain();
    expect(s.skipForward()).toBe(false);
    expect(s.current).toBe(20);
    s.addGroup(21);
    s.addGroup(22);
    s.addChunk(22, chunk(0));
    s.addChunk(22, chunk(1));
    expect(s.skipForward()).toBe(true);
    expect(abandoned).toEqual([20, 21]);
    expect(drain()).toEqual(['22:0', '22:1']);
    expect(s.stats).toMatchObject({ dropped: 2, skips: 1 });
  });

  it('starts with the newest group whose start is in', () => {
    const { s, abandoned, drain } = setup();
    s.addGroup(40);
    s.addChunk(40, chunk(3));
    s.addGroup(41);
    s.addChunk(41, chunk(0));
    s.addGroup(42);
    expect(drain()).toEqual(['41:0']);
    expect(abandoned).toEqual([40]);
    expect(s.stats.dropped).toBe(1);
  });

  it('skips when too many groups queue behind the fed one', () => {
    const { s, drain } = setup();
    s.addGroup(0);
    s.addChunk(0, chunk(0));
    drain();
    for (let g = 1; g <= MAX_QUEUED_GROUPS + 1; g++) {
      s.addGroup(g);
      s.addChunk(g, chunk(0));
    }
    // Group MAX+1's header tips it over; the newest start in at that moment is group MAX.
    expect(s.current).toBe(MAX_QUEUED_GROUPS);
    expect(drain()).toEqual([`${MAX_QUEUED_GROUPS}:0`]);
    expect(s.stats.dropped).toBe(MAX_QUEUED_GROUPS);
  });
});

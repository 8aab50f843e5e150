/**
 * Which live group's chunks go into the SourceBuffer next. Pure (no streams, no clock), so the
 * policy is unit-tested; src/watch/live.ts feeds it stream events and applies its decisions.
 *
 * MSE needs one group at a time in decode order: after a later group's frames, an earlier
 * group's frames would be cut off until the next keyframe. So exactly one group is *fed*; the
 * chunks of newer groups wait in memory. Policy:
 * - A fed group is followed by the next group in sequence as soon as its first chunk (a
 *   keyframe, first frame 0) is in: no gap in the media.
 * - A group whose stream ended in an error (the server reset it: superseded) is abandoned, and
 *   so is a group the player declares too late (`skipForward`). Then the feed skips forward to
 *   a newer group whose start is in: the oldest one that ends after the player's target position
 *   (`targetPositionS`, liveEdge − target latency), i.e. the group holding that position or the
 *   first after it; if every candidate ends before it, the newest. Every group before it is
 *   dropped (their streams are cancelled); the player seeks over the gap. Until some group's
 *   start is in, nothing is fed.
 * - The first group fed is chosen the same way.
 *
 * (Jumping to the newest start instead would land far below the target latency with almost
 * nothing buffered, e.g. past a complete group, and stall again at once.)
 */

import type { LiveChunk } from '../protocol';

interface GroupState {
  chunks: LiveChunk[];
  /** Index in the group of the next frame wanted (after the chunks taken so far). */
  nextFrame: number;
  /** Whether the first chunk received starts the group (frame 0); null before any chunk. */
  startOk: boolean | null;
  done: boolean;
  failed: string | null;
}

export interface GroupStats {
  /** Group streams whose header arrived. */
  received: number;
  /** Groups fed to the end. */
  completed: number;
  /**
   * Groups of the subscription not fed to the end: reset by the server, abandoned as too late,
   * or skipped over (including groups whose stream never arrived), counted once each.
   */
  dropped: number;
  /** Times the feed skipped forward (abandoning a group, or leaving a gap). */
  skips: number;
}

/** At most this many groups wait behind the fed one; more means the feed is far behind: skip. */
export const MAX_QUEUED_GROUPS = 8;

export class GroupScheduler {
  private readonly groups = new Map<number, GroupState>();
  /** The group being fed. */
  private feeding: number | null = null;
  /** The group that follows in sequence (last resolved + 1); null before the first. */
  private next: number | null = null;
  /** Choose the newest group with its start in (at the start, and after an abandonment). */
  private skipping = true;
  readonly stats: GroupStats = { received: 0, completed: 0, dropped: 0, skips: 0 };
  /** Where the player wants its playhead (media s): liveEdge − target; null: newest group. */
  targetPositionS: number | null = null;
  /** Called for every group given up (its stream can be cancelled). */
  onAbandon: (group: number) => void = () => undefined;

  /**
   * @param groupStartS media time (s) of a group's first frame
   * @param frameS duration of one frame, s
   */
  constructor(
    private readonly groupStartS: (group: number) => number,
    private readonly frameS: number,
  ) {}

  /** Groups below this are resolved (fed or dropped). */
  private get floor(): number {
    return this.feeding ?? this.next ?? -Infinity;
  }

  /** A group's header arrived. False: it is stale or a duplicate — cancel its stream. */
  addGroup(group: number): boolean {
    if (group < this.floor || this.groups.has(group)) return false;
    this.stats.received += 1;
    this.groups.set(group, { chunks: [], nextFrame: 0, startOk: null, done: false, failed: null });
    if (this.groups.size > MAX_QUEUED_GROUPS + 1) this.skipForward();
    return true;
  }

  addChunk(group: number, chunk: LiveChunk): void {
    const g = this.groups.get(group);
    if (!g || g.failed !== null) return;
    if (g.startOk === null) g.startOk = chunk.firstFrame === 0;
    g.chunks.push(chunk);
  }

  /** The group's stream finished normally (FIN). */
  endGroup(group: number): void {
    const g = this.groups.get(group);
    if (g) g.done = true;
  }

  /** The group's stream ended in an error (reset by the server, or unparseable). */
  failGroup(group: number, reason: string): void {
    const g = this.groups.get(group);
    if (g && !g.done) g.failed = reason;
  }

  /** The next chunk to append, or null when it has not arrived yet. */
  take(): { group: number; chunk: LiveChunk } | null {
    for (;;) {
      if (this.feeding === null && !this.choose()) return null;
      const group = this.feeding as number;
      const g = this.groups.get(group) as GroupState;
      const chunk = g.chunks.shift();
      if (chunk !== undefined) {
        g.nextFrame = chunk.firstFrame + chunk.frameCount;
        return { group, chunk };
      }
      if (g.failed !== null) {
        this.resolve(group, false);
        this.skipping = true;
        this.stats.skips += 1;
      } else if (g.done) {
        this.resolve(group, true);
      } else {
        return null;
      }
    }
  }

  /** The group being fed, if any. */
  get current(): number | null {
    return this.feeding;
  }

  /** Media time (s) of the next frame the feed waits for; null before the first group. */
  nextNeededS(): number | null {
    if (this.feeding !== null) {
      const g = this.groups.get(this.feeding);
      return this.groupStartS(this.feeding) + (g?.nextFrame ?? 0) * this.frameS;
    }
    return this.next === null ? null : this.groupStartS(this.next);
  }

  /**
   * The group to skip to, past the fed one, with its start in: the oldest that ends after
   * `targetPositionS`, else the newest; null when there is none.
   */
  skipTarget(): number | null {
    const after = this.feeding ?? (this.next === null ? -Infinity : this.next - 1);
    const candidates = [...this.groups]
      .filter(([group, g]) => group > after && g.startOk === true && g.failed === null)
      .map(([group]) => group)
      .sort((a, b) => a - b);
    if (candidates.length === 0) return null;
    const p = this.targetPositionS;
    const eligible = p === null ? [] : candidates.filter((group) => this.groupStartS(group + 1) > p);
    return eligible[0] ?? (candidates[candidates.length - 1] as number);
  }

  /**
   * Give up the group being fed (or waited for) and skip forward (see `skipTarget`). Returns
   * false (and changes nothing) when there is no newer group with its start in.
   */
  skipForward(): boolean {
    const target = this.skipTarget();
    if (target === null) return false;
    if (this.feeding !== null) this.resolve(this.feeding, false);
    this.skipping = true;
    this.stats.skips += 1;
    this.choose();
    return true;
  }

  private choose(): boolean {
    if (!this.skipping && this.next !== null) {
      const g = this.groups.get(this.next);
      if (g === undefined || g.startOk === null) {
        if (g?.failed == null) return false; // wait for it
      }
      if (g !== undefined && g.failed === null && g.startOk === true) {
        this.feeding = this.next;
        return true;
      }
      // Failed, or its stream does not start with the group's first frame: abandon it.
      this.resolve(this.next, false);
      this.skipping = true;
      this.stats.skips += 1;
    }
    const target = this.skipTarget();
    if (target === null) return false;
    if (this.next !== null) this.stats.dropped += target - this.next; // skipped over, seen or not
    for (const group of [...this.groups.keys()]) {
      if (group < target) {
        if (this.next === null) this.stats.dropped += 1; // before the first group fed: only the seen ones
        this.groups.delete(group);
        this.onAbandon(group);
      }
    }
    this.feeding = target;
    this.skipping = false;
    return true;
  }

  private resolve(group: number, ok: boolean): void {
    this.groups.delete(group);
    if (ok) {
      this.stats.completed += 1;
    } else {
      this.stats.dropped += 1;
      this.onAbandon(group);
    }
    if (this.feeding === group) this.feeding = null;
    this.next = group + 1;
  }
}

/**
 * Live groups over datagrams (shared/PROTOCOL.md "Live over datagrams (`live.fec=K`)", "The
 * viewer"): LIVE_DATA / LIVE_PARITY datagrams in, one LIVE_GROUP stream per group out — the
 * bytes after the stream-type byte, exactly what `routeUniStream` hands the LiveGroupInbox —
 * so the live player's group rules do not depend on the delivery.
 *
 * A chunk is emitted once it is complete and every earlier chunk of its group was emitted; a
 * group's stream closes after its last chunk. A chunk that is *overdue* (a datagram of a later
 * chunk or a newer group arrived, or OVERDUE_MS passed since its last datagram) and still
 * incomplete is NACKed, and NACKed again every max(MIN_RENACK_MS, RENACK_FACTOR × the last
 * NACK → repair time) while it is missing. A group still incomplete `keepMs` after a newer
 * group's first datagram is given up: its stream errors, as a stream the server resets does.
 * So does a group the server says it superseded (LIVE_GONE), at once.
 * Clock and timers are injected so the tests are deterministic.
 */

import {
  LiveChunkReassembler,
  LiveDatagramType,
  decodeLiveFragment,
  decodeLiveGone,
  encodeLiveChunk,
  encodeLiveGroupHeader,
  encodeLiveNack,
  type LiveFragment,
  type LiveGone,
  type LiveGroupHeader,
} from '../protocol';
import type { LiveGroupStream } from './unistreams';

/** A chunk with no datagram for this long (and none of a later chunk or group) is overdue. */
export const OVERDUE_MS = 20;
/** Shortest interval between two NACKs of one chunk. */
export const MIN_RENACK_MS = 50;
/** Re-NACK after this many times the last measured NACK → repair time (when over the minimum). */
export const RENACK_FACTOR = 1.5;

export interface LiveDatagramCounters {
  /** Data fragments rebuilt from parity. */
  fecRecovered: number;
  nacksSent: number;
  /** Retransmitted data fragments that arrived while still missing. */
  fragmentsRetransmitted: number;
  /** Groups given up `keepMs` after a newer group began (not those the player cancelled). */
  fecGroupsGivenUp: number;
  /** Groups the server said it superseded (LIVE_GONE) before they were complete here. */
  fecGroupsSuperseded: number;
  /** Datagrams dropped because their fields disagree (with themselves, their group or chunk). */
  malformed: number;
}

export function newLiveDatagramCounters(): LiveDatagramCounters {
  return { fecRecovered: 0, nacksSent: 0, fragmentsRetransmitted: 0, fecGroupsGivenUp: 0, fecGroupsSuperseded: 0, malformed: 0 };
}

/** The assembler's clock: ms on any monotonic clock, and one-shot timers. */
export interface LiveDatagramClock {
  now(): number;
  /** Run `run` once after `ms`; the returned function cancels it. */
  schedule(run: () => void, ms: number): () => void;
}

export const browserClock: LiveDatagramClock = {
  now: () => performance.now(),
  schedule: (run, ms) => {
    const timer = setTimeout(run, ms);
    return () => clearTimeout(timer);
  },
};

export interface LiveDatagramOptions {
  /** Where each new group's stream goes (the session's LiveGroupInbox). */
  deliver(stream: LiveGroupStream): void;
  /** Sends a LIVE_NACK; must not throw (a failed send is just a lost NACK). */
  sendDatagram(bytes: Uint8Array): void;
  /** Give a group up this long after a newer group's first datagram arrived, ms. */
  keepMs: number;
  clock?: LiveDatagramClock;
  /** Shared across a player's sessions, so the metrics count over reconnects. */
  counters?: LiveDatagramCounters;
}

/** One chunk index of a group, from its first datagram (or from being skipped) until emitted. */
interface ChunkSlot {
  readonly index: number;
  /** Null while no fragment of it has arrived (a skipped chunk is NACKed with n = 0). */
  parts: LiveChunkReassembler | null;
  /** The chunk as framed on a stream, once complete (until emitted). */
  framed: Uint8Array | null;
  overdue: boolean;
  cancelOverdue: (() => void) | null;
  /** When its last datagram arrived, ms (the overdue clock runs from it). */
  lastDatagramMs: number;
  cancelRenack: (() => void) | null;
  lastNackMs: number | null;
}

interface GroupState {
  readonly header: LiveGroupHeader;
  readonly chunksInGroup: number;
  /** Chunks not yet emitted that are known (a datagram arrived, or a later one did). */
  readonly slots: Map<number, ChunkSlot>;
  /** The next chunk index to emit. */
  nextEmit: number;
  /** A newer group's datagram arrived: every chunk of this one is overdue. */
  newerArrived: boolean;
  cancelGiveUp: (() => void) | null;
  readonly controller: ReadableStreamDefaultController<Uint8Array>;
}

/** The error a given-up group's stream ends with. */
export class LiveGroupGivenUp extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LiveGroupGivenUp';
  }
}

export class LiveDatagramAssembler {
  readonly counters: LiveDatagramCounters;
  private readonly groups = new Map<number, GroupState>();
  private readonly clock: LiveDatagramClock;
  /** The newest group a datagram arrived for, and when its first datagram did. */
  private newest: { group: number; firstMs: number } | null = null;
  /** Groups up to this one that have no state are finished (closed, given up or cancelled). */
  private finishedUpTo = -1;
  /** Groups above `finishedUpTo` the server said are gone before any datagram of theirs came. */
  private readonly goneUnseen = new Set<number>();
  /** The last NACK → repair time measured, ms. */
  private lastRepairMs: number | null = null;
  private closedReason: string | null = null;

  constructor(private readonly options: LiveDatagramOptions) {
    this.clock = options.clock ?? browserClock;
    this.counters = options.counters ?? newLiveDatagramCounters();
  }

  /** Groups being assembled. */
  get activeGroups(): number {
    return this.groups.size;
  }

  /** One datagram's payload. Never throws: a malformed datagram is counted and dropped. */
  receive(bytes: Uint8Array): void {
    if (this.closedReason !== null) return;
    if (bytes[0] === LiveDatagramType.LIVE_GONE) {
      this.receiveGone(bytes);
      return;
    }
    let fragment: LiveFragment;
    try {
      fragment = decodeLiveFragment(bytes);
    } catch {
      this.counters.malformed += 1; // ProtocolError: fields that disagree (or too short to have any)
      return;
    }
    const state = this.groupFor(fragment);
    if (state === null) return;
    if (fragment.chunkIndex < state.nextEmit) return; // emitted: a late parity or duplicate retransmission
    const slot = this.slotFor(state, fragment.chunkIndex);
    if (slot.parts === null) {
      slot.parts = new LiveChunkReassembler(fragment);
    } else if (slot.parts.mismatch(fragment) !== null) {
      this.counters.malformed += 1;
      return;
    }
    this.addFragment(state, slot, slot.parts, fragment);

    if (this.newest === null || fragment.group > this.newest.group) {
      this.newest = { group: fragment.group, firstMs: this.clock.now() };
      for (const older of [...this.groups.values()]) if (older.header.group < fragment.group) this.newerArrived(older);
    }
    if (this.groups.get(fragment.group) !== state) return; // the group just ended
    // A group whose first datagram comes after a newer group's (reordered, or its first ones lost).
    if (this.newest.group > fragment.group) this.newerArrived(state);
    // Every earlier chunk still missing is overdue; an index skipped entirely gets a slot here.
    for (let i = state.nextEmit; i < fragment.chunkIndex; i++) this.makeOverdue(state, this.slotFor(state, i));
    if (state.slots.get(slot.index) !== slot || slot.framed !== null || slot.overdue) return;
    if (state.newerArrived) {
      this.makeOverdue(state, slot);
    } else {
      slot.lastDatagramMs = this.clock.now();
      // One timer per chunk, moved on lazily: not a clear and a set per datagram.
      if (slot.cancelOverdue === null) this.armOverdue(state, slot, OVERDUE_MS);
    }
  }

  private receiveGone(bytes: Uint8Array): void {
    let gone: LiveGone;
    try {
      gone = decodeLiveGone(bytes);
    } catch {
      this.counters.malformed += 1;
      return;
    }
    const state = this.groups.get(gone.group);
    if (state === undefined) {
      // Not seen yet (every datagram of it was taken back unsent), or over here already.
      if (gone.group > this.finishedUpTo && !this.goneUnseen.has(gone.group)) {
        this.goneUnseen.add(gone.group);
        this.counters.fecGroupsSuperseded += 1;
      }
      return;
    }
    if (gone.rendition !== state.header.rendition) {
      this.counters.malformed += 1;
      return;
    }
    this.counters.fecGroupsSuperseded += 1;
    this.endIncomplete(state, 'superseded by the server');
  }

  /** End `state`'s stream in a LiveGroupGivenUp naming its missing chunks. */
  private endIncomplete(state: GroupState, why: string): void {
    const missing = [...state.slots.values()].filter((s) => s.framed === null).map((s) => s.index);
    this.finish(state);
    state.controller.error(new LiveGroupGivenUp(`group ${state.header.group} ${why} (chunks ${missing.join(', ')} missing)`));
  }

  /** Check `slot` in `ms`: overdue if no datagram of it came for OVERDUE_MS, else check again then. */
  private armOverdue(state: GroupState, slot: ChunkSlot, ms: number): void {
    slot.cancelOverdue = this.clock.schedule(() => {
      slot.cancelOverdue = null;
      if (this.groups.get(state.header.group) !== state) return;
      const quietMs = this.clock.now() - slot.lastDatagramMs;
      if (quietMs >= OVERDUE_MS) this.makeOverdue(state, slot);
      else this.armOverdue(state, slot, OVERDUE_MS - quietMs);
    }, ms);
  }

  /** The session ended: every group still open ends in an error, and nothing more is sent. */
  close(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    for (const state of [...this.groups.values()]) {
      this.finish(state);
      state.controller.error(new Error(reason));
    }
  }

  /** The fragment's group: existing, new (its stream delivered), or null if it is over. */
  private groupFor(fragment: LiveFragment): GroupState | null {
    const existing = this.groups.get(fragment.group);
    if (existing !== undefined) {
      const h = existing.header;
      if (fragment.rendition !== h.rendition || fragment.captureUs !== h.captureUs || fragment.chunksInGroup !== existing.chunksInGroup) {
        this.counters.malformed += 1;
        return null;
      }
      return existing;
    }
    if (fragment.group <= this.finishedUpTo || this.goneUnseen.has(fragment.group)) return null; // late: a retransmission or leftovers
    const header: LiveGroupHeader = { rendition: fragment.rendition, group: fragment.group, captureUs: fragment.captureUs };
    const opened: { controller?: ReadableStreamDefaultController<Uint8Array> } = {};
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        opened.controller = controller;
      },
      cancel: () => {
        const state = this.groups.get(header.group);
        if (state !== undefined) this.finish(state); // the player let it go: no more NACKs
      },
    });
    const state: GroupState = {
      header,
      chunksInGroup: fragment.chunksInGroup,
      slots: new Map(),
      nextEmit: 0,
      newerArrived: false,
      cancelGiveUp: null,
      controller: opened.controller as ReadableStreamDefaultController<Uint8Array>, // start() runs in the constructor
    };
    this.groups.set(header.group, state);
    state.controller.enqueue(encodeLiveGroupHeader(header));
    this.options.deliver(stream);
    return state;
  }

  private slotFor(state: GroupState, index: number): ChunkSlot {
    let slot = state.slots.get(index);
    if (slot === undefined) {
      slot = { index, parts: null, framed: null, overdue: false, cancelOverdue: null, lastDatagramMs: this.clock.now(), cancelRenack: null, lastNackMs: null };
      state.slots.set(index, slot);
    }
    return slot;
  }

  private addFragment(state: GroupState, slot: ChunkSlot, parts: LiveChunkReassembler, fragment: LiveFragment): void {
    if (slot.framed !== null) return; // complete already (e.g. a retransmission that parity beat)
    const wasMissing = fragment.kind === 'data' && parts.isMissing(fragment.index);
    const result = parts.add(fragment);
    this.counters.fecRecovered += result.recovered;
    if (fragment.retransmission && wasMissing) this.counters.fragmentsRetransmitted += 1;
    if (!parts.complete) return;
    if (slot.lastNackMs !== null) this.lastRepairMs = this.clock.now() - slot.lastNackMs;
    this.stopTimers(slot);
    const { firstFrame, frameCount } = parts.info;
    slot.framed = encodeLiveChunk({ firstFrame, frameCount, data: parts.bytes() });
    slot.parts = null; // the fragments are not needed any more
    this.emitReady(state);
  }

  /** Enqueue every complete chunk that is next in order; close the group after its last. */
  private emitReady(state: GroupState): void {
    for (let slot = state.slots.get(state.nextEmit); slot?.framed; slot = state.slots.get(state.nextEmit)) {
      state.controller.enqueue(slot.framed);
      state.slots.delete(state.nextEmit);
      state.nextEmit += 1;
    }
    if (state.nextEmit >= state.chunksInGroup) {
      this.finish(state);
      state.controller.close();
    }
  }

  /** A newer group began: every chunk of `state` not yet emitted is overdue, and the give-up clock runs. */
  private newerArrived(state: GroupState): void {
    if (state.newerArrived || this.newest === null) return;
    state.newerArrived = true;
    const giveUpInMs = Math.max(0, this.newest.firstMs + this.options.keepMs - this.clock.now());
    state.cancelGiveUp = this.clock.schedule(() => {
      state.cancelGiveUp = null;
      if (this.groups.get(state.header.group) !== state) return;
      this.counters.fecGroupsGivenUp += 1;
      this.endIncomplete(state, `given up: incomplete ${this.options.keepMs} ms after a newer group began`);
    }, giveUpInMs);
    for (let i = state.nextEmit; i < state.chunksInGroup; i++) this.makeOverdue(state, this.slotFor(state, i));
  }

  /** An incomplete chunk became overdue: NACK it now and again until it is complete. */
  private makeOverdue(state: GroupState, slot: ChunkSlot): void {
    if (slot.overdue || slot.framed !== null) return;
    slot.overdue = true;
    slot.cancelOverdue?.();
    slot.cancelOverdue = null;
    this.nack(state, slot);
  }

  private nack(state: GroupState, slot: ChunkSlot): void {
    const parts = slot.parts;
    const bytes = encodeLiveNack({
      rendition: state.header.rendition,
      group: state.header.group,
      chunkIndex: slot.index,
      dataFragments: parts?.info.dataFragments ?? 0,
      missing: parts?.missingData() ?? [],
    });
    try {
      this.options.sendDatagram(bytes);
    } catch {
      // A NACK that could not be sent is a lost NACK: the re-NACK below covers it.
    }
    this.counters.nacksSent += 1;
    slot.lastNackMs = this.clock.now();
    const intervalMs = Math.max(MIN_RENACK_MS, RENACK_FACTOR * (this.lastRepairMs ?? 0));
    slot.cancelRenack = this.clock.schedule(() => {
      slot.cancelRenack = null;
      if (this.groups.get(state.header.group) === state && state.slots.get(slot.index) === slot && slot.framed === null) this.nack(state, slot);
    }, intervalMs);
  }

  private stopTimers(slot: ChunkSlot): void {
    slot.cancelOverdue?.();
    slot.cancelOverdue = null;
    slot.cancelRenack?.();
    slot.cancelRenack = null;
  }

  /** Forget a group (closed, given up or cancelled): no more timers or NACKs, and its late datagrams are ignored. */
  private finish(state: GroupState): void {
    if (this.groups.get(state.header.group) !== state) return;
    this.groups.delete(state.header.group);
    state.cancelGiveUp?.();
    state.cancelGiveUp = null;
    for (const slot of state.slots.values()) this.stopTimers(slot);
    this.finishedUpTo = Math.max(this.finishedUpTo, state.header.group);
    for (const group of this.goneUnseen) if (group <= this.finishedUpTo) this.goneUnseen.delete(group);
  }
}

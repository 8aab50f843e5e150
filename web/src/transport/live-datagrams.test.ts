import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  LiveGroupParser,
  bytesToHex,
  decodeLiveNack,
  encodeLiveFragment,
  encodeLiveGone,
  encodeLiveGroup,
  fragmentChunk,
  type LiveFragment,
  type LiveGroupHeader,
  type LiveNack,
} from '../protocol';
import {
  LiveDatagramAssembler,
  LiveGroupGivenUp,
  MIN_RENACK_MS,
  OVERDUE_MS,
  newLiveDatagramCounters,
  type LiveDatagramClock,
} from './live-datagrams';
import { Session, wantsLiveDatagrams } from './session';
import { TelemetryLog } from './telemetry';

/** Timers on a clock that moves only when told. */
class FakeClock implements LiveDatagramClock {
  nowMs = 0;
  private timers: { atMs: number; run: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.nowMs;
  }

  schedule(run: () => void, ms: number): () => void {
    const timer = { atMs: this.nowMs + ms, run, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Move to `ms` later, running every timer due on the way, in time order. */
  advance(ms: number): void {
    const end = this.nowMs + ms;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.atMs <= end).sort((a, b) => a.atMs - b.atMs)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = due.atMs;
      due.run();
    }
    this.nowMs = end;
  }
}

/** A group stream read in the background: what arrived so far, and how it ended. */
class Collected {
  bytes: number[] = [];
  done = false;
  error: unknown = null;
  readonly reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.reader = stream.getReader();
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const { value, done } = await this.reader.read();
        if (done) break;
        this.bytes.push(...value);
      }
      this.done = true;
    } catch (error) {
      this.error = error;
    }
  }

  get hex(): string {
    return bytesToHex(Uint8Array.from(this.bytes));
  }
}

/** Let the stream readers take what was enqueued. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

const CAPTURE_US = 1_700_000_000_000_000;
/** 2500 bytes: n = 3 data fragments (834, 834, 832); K = 2 → m = 2 parity (classes {0, 2} and {1}). */
const CHUNK_BYTES = 2500;
const FEC = 2;

function chunkData(group: number, index: number, length = CHUNK_BYTES): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 7 + group * 13 + index * 31) & 0xff);
}

interface TestGroup {
  header: LiveGroupHeader;
  chunks: Uint8Array[];
  /** Each chunk's fragments in sending order: data, then parity. */
  fragments: LiveFragment[][];
}

function makeGroup(group: number, rendition = 0, chunkCount = 3, fec = FEC): TestGroup {
  const header = { rendition, group, captureUs: CAPTURE_US + group * 500_000 };
  const chunks = Array.from({ length: chunkCount }, (_, i) => chunkData(group, i));
  const fragments = chunks.map((chunk, i) =>
    fragmentChunk({ ...header, chunkIndex: i, chunksInGroup: chunkCount, firstFrame: i, frameCount: 1 }, chunk, fec),
  );
  return { header, chunks, fragments };
}

/** The LIVE_GROUP stream bytes (after the type byte) of the group's first `count` chunks. */
function streamHex(g: TestGroup, count = g.chunks.length): string {
  const chunks = g.chunks.slice(0, count).map((data, i) => ({ firstFrame: i, frameCount: 1, data }));
  return bytesToHex(encodeLiveGroup(g.header, chunks).subarray(1));
}

function dataFragment(g: TestGroup, chunk: number, index: number, retransmission = false): Uint8Array {
  const f = g.fragments[chunk]?.find((x) => x.kind === 'data' && x.index === index);
  if (!f) throw new Error(`no data fragment ${index} of chunk ${chunk}`);
  return encodeLiveFragment({ ...f, retransmission });
}

function setup(keepMs = 300): {
  clock: FakeClock;
  assembler: LiveDatagramAssembler;
  streams: Collected[];
  nacks: LiveNack[];
  feed(g: TestGroup, chunk: number, skip?: (f: LiveFragment) => boolean): void;
} {
  const clock = new FakeClock();
  const streams: Collected[] = [];
  const nacks: LiveNack[] = [];
  const assembler = new LiveDatagramAssembler({
    deliver: (stream) => streams.push(new Collected(stream)),
    sendDatagram: (bytes) => nacks.push(decodeLiveNack(bytes)),
    keepMs,
    clock,
  });
  const feed = (g: TestGroup, chunk: number, skip: (f: LiveFragment) => boolean = () => false): void => {
    for (const f of g.fragments[chunk] ?? []) if (!skip(f)) assembler.receive(encodeLiveFragment(f));
  };
  return { clock, assembler, streams, nacks, feed };
}

describe('LiveDatagramAssembler', () => {
  it('turns in-order datagrams into the exact LIVE_GROUP stream, each chunk as soon as it is complete', async () => {
    const { assembler, streams, nacks, feed, clock } = setup();
    const g = makeGroup(5);
    feed(g, 0);
    await settle();
    expect(streams).toHaveLength(1);
    expect(streams[0]?.hex).toBe(streamHex(g, 1));
    expect(streams[0]?.done).toBe(false);
    feed(g, 1);
    feed(g, 2);
    await settle();
    expect(streams[0]?.hex).toBe(streamHex(g));
    expect(streams[0]?.done).toBe(true);
    // The bytes parse as a stream of the group would.
    const parser = new LiveGroupParser();
    expect(parser.push(Uint8Array.from(streams[0]?.bytes ?? []))).toHaveLength(3);
    parser.end();
    expect(parser.header).toEqual(g.header);
    clock.advance(1000);
    expect(nacks).toEqual([]);
    expect(assembler.counters).toEqual({ fecRecovered: 0, nacksSent: 0, fragmentsRetransmitted: 0, fecGroupsGivenUp: 0, fecGroupsSuperseded: 0, malformed: 0 });
    expect(assembler.activeGroups).toBe(0);
  });

  it('rebuilds a lost data fragment from parity without a NACK', async () => {
    const { assembler, streams, nacks, feed, clock } = setup();
    const g = makeGroup(5, 0, 1);
    feed(g, 0, (f) => f.kind === 'data' && f.index === 1);
    await settle();
    expect(streams[0]?.hex).toBe(streamHex(g));
    expect(streams[0]?.done).toBe(true);
    clock.advance(1000);
    expect(nacks).toEqual([]);
    expect(assembler.counters.fecRecovered).toBe(1);
  });

  it('NACKs a chunk parity cannot complete once a later chunk arrives, and completes it with the retransmissions', async () => {
    const { assembler, streams, nacks, feed, clock } = setup();
    const g = makeGroup(5);
    feed(g, 0, (f) => f.kind === 'data' && (f.index === 0 || f.index === 2)); // both of parity class 0
    clock.advance(5);
    expect(nacks).toEqual([]); // not overdue yet
    feed(g, 1); // a later chunk: chunk 0 is overdue
    expect(nacks).toEqual([{ rendition: 0, group: 5, chunkIndex: 0, dataFragments: 3, missing: [0, 2] }]);
    await settle();
    expect(streams[0]?.hex).toBe(streamHex(g, 0)); // chunk 1 waits for chunk 0
    clock.advance(30);
    assembler.receive(dataFragment(g, 0, 0, true));
    // With fragment 0 back, parity rebuilds fragment 2: its retransmission comes too late to count.
    assembler.receive(dataFragment(g, 0, 2, true));
    await settle();
    expect(streams[0]?.hex).toBe(streamHex(g, 2));
    expect(assembler.counters).toMatchObject({ nacksSent: 1, fragmentsRetransmitted: 1, fecRecovered: 1 });
    clock.advance(1000);
    expect(nacks).toHaveLength(1);
  });

  it(`NACKs an incomplete chunk ${OVERDUE_MS} ms after its last datagram`, () => {
    const { nacks, feed, clock } = setup();
    const g = makeGroup(5, 0, 2, 0);
    feed(g, 0, (f) => f.index === 1);
    clock.advance(OVERDUE_MS - 1);
    expect(nacks).toEqual([]);
    clock.advance(1);
    expect(nacks).toEqual([{ rendition: 0, group: 5, chunkIndex: 0, dataFragments: 3, missing: [1] }]);
  });

  it('NACKs a chunk index skipped entirely with n = 0', async () => {
    const { assembler, streams, nacks, feed } = setup();
    const g = makeGroup(5);
    feed(g, 0);
    assembler.receive(encodeLiveFragment(g.fragments[2]?.[0] as LiveFragment));
    expect(nacks).toEqual([{ rendition: 0, group: 5, chunkIndex: 1, dataFragments: 0, missing: [] }]);
    for (let i = 0; i < 3; i++) assembler.receive(dataFragment(g, 1, i, true));
    feed(g, 2);
    await settle();
    expect(streams[0]?.hex).toBe(streamHex(g));
    expect(streams[0]?.done).toBe(true);
    expect(assembler.counters.fragmentsRetransmitted).toBe(3);
  });

  it('NACKs again every max(50 ms, 1.5 × the last repair time) while the chunk is missing', () => {
    const { assembler, nacks, feed, clock } = setup(10_000);
    const g = makeGroup(5, 0, 3, 0);
    feed(g, 0, (f) => f.index === 1);
    feed(g, 1);
    expect(nacks).toHaveLength(1);
    clock.advance(MIN_RENACK_MS - 1);
    expect(nacks).toHaveLength(1);
    clock.advance(1);
    expect(nacks).toHaveLength(2);
    clock.advance(MIN_RENACK_MS);
    expect(nacks).toHaveLength(3);
    expect(nacks[2]).toEqual(nacks[0]);
    // Repaired 30 ms after the last NACK: 1.5 × 30 is under the minimum, so still 50 ms.
    clock.advance(30);
    assembler.receive(dataFragment(g, 0, 1, true));
    clock.advance(1000);
    expect(nacks).toHaveLength(3);

    // Chunk 2 loses a fragment, repaired 40 ms after its NACK → the next re-NACK comes after 60 ms.
    feed(g, 2, (f) => f.index === 0);
    clock.advance(OVERDUE_MS);
    expect(nacks).toHaveLength(4);
    clock.advance(40);
    assembler.receive(dataFragment(g, 2, 0, true));
    const g6 = makeGroup(6, 0, 1, 0);
    feed(g6, 0, (f) => f.index === 2);
    clock.advance(OVERDUE_MS);
    expect(nacks).toHaveLength(5);
    expect(nacks[4]).toEqual({ rendition: 0, group: 6, chunkIndex: 0, dataFragments: 3, missing: [2] });
    clock.advance(59);
    expect(nacks).toHaveLength(5);
    clock.advance(1);
    expect(nacks).toHaveLength(6);
  });

  it('gives a group up keepMs after a newer group began: its stream errors and its NACKs stop', async () => {
    const { assembler, streams, nacks, feed, clock } = setup(300);
    const g5 = makeGroup(5, 0, 2);
    const g6 = makeGroup(6, 0, 2);
    feed(g5, 0, (f) => f.kind === 'data' && f.index !== 1); // two of class 0 lost
    clock.advance(10);
    feed(g6, 0);
    // The newer group makes chunk 0 and the never-seen chunk 1 overdue.
    expect(nacks.slice(0, 2)).toEqual([
      { rendition: 0, group: 5, chunkIndex: 0, dataFragments: 3, missing: [0, 2] },
      { rendition: 0, group: 5, chunkIndex: 1, dataFragments: 0, missing: [] },
    ]);
    clock.advance(299);
    await settle();
    expect(streams[0]?.error).toBeNull();
    clock.advance(1);
    await settle();
    expect(streams[0]?.error).toBeInstanceOf(LiveGroupGivenUp);
    expect(String(streams[0]?.error)).toMatch(/group 5 given up.*chunks 0, 1 missing/);
    expect(assembler.counters.fecGroupsGivenUp).toBe(1);
    const sent = nacks.length;
    clock.advance(1000);
    expect(nacks).toHaveLength(sent);
    // Late datagrams of the given-up group are ignored (no new stream, not malformed).
    assembler.receive(dataFragment(g5, 0, 0, true));
    feed(g5, 1);
    expect(streams).toHaveLength(2);
    expect(assembler.counters.malformed).toBe(0);
    feed(g6, 1);
    await settle();
    expect(streams[1]?.hex).toBe(streamHex(g6));
  });

  it('ends a group at once, without more NACKs, when the server says it superseded it (LIVE_GONE)', async () => {
    const { assembler, streams, nacks, feed, clock } = setup(300);
    const g5 = makeGroup(5, 0, 2);
    feed(g5, 0);
    feed(g5, 1, (f) => f.kind === 'data'); // the rest of the group was taken back unsent
    clock.advance(OVERDUE_MS);
    expect(nacks).toHaveLength(1);
    assembler.receive(encodeLiveGone({ rendition: 0, group: 5 }));
    await settle();
    expect(streams[0]?.error).toBeInstanceOf(LiveGroupGivenUp);
    expect(String(streams[0]?.error)).toMatch(/group 5 superseded by the server.*chunks 1 missing/);
    expect(assembler.counters).toMatchObject({ fecGroupsSuperseded: 1, fecGroupsGivenUp: 0, malformed: 0 });
    clock.advance(1000);
    expect(nacks).toHaveLength(1);
    // Its late datagrams and a second LIVE_GONE (an answer to a NACK) change nothing.
    assembler.receive(dataFragment(g5, 1, 0, true));
    assembler.receive(encodeLiveGone({ rendition: 0, group: 5 }));
    expect(streams).toHaveLength(1);
    expect(assembler.counters).toMatchObject({ fecGroupsSuperseded: 1, malformed: 0 });
  });

  it('ignores every later datagram of a group gone before any of it arrived', async () => {
    const { assembler, streams, feed } = setup(300);
    assembler.receive(encodeLiveGone({ rendition: 0, group: 7 }));
    assembler.receive(encodeLiveGone({ rendition: 0, group: 7 }));
    expect(assembler.counters.fecGroupsSuperseded).toBe(1);
    feed(makeGroup(7, 0, 1), 0);
    expect(streams).toHaveLength(0);
    const g8 = makeGroup(8, 0, 1);
    feed(g8, 0);
    await settle();
    expect(streams[0]?.hex).toBe(streamHex(g8));
  });

  it('counts a LIVE_GONE of the wrong length, or for another rendition, as malformed', () => {
    const { assembler, feed } = setup(300);
    feed(makeGroup(5, 0, 2), 0);
    assembler.receive(encodeLiveGone({ rendition: 0, group: 5 }).subarray(0, 6));
    assembler.receive(encodeLiveGone({ rendition: 1, group: 5 }));
    expect(assembler.counters).toMatchObject({ malformed: 2, fecGroupsSuperseded: 0 });
    expect(assembler.activeGroups).toBe(1);
  });

  it('stops NACKing a group the player cancels', async () => {
    const { assembler, streams, nacks, feed, clock } = setup();
    const g = makeGroup(5, 0, 2, 0);
    feed(g, 0, (f) => f.index === 0);
    clock.advance(OVERDUE_MS);
    expect(nacks).toHaveLength(1);
    await streams[0]?.reader.cancel('not wanted');
    clock.advance(1000);
    expect(nacks).toHaveLength(1);
    expect(assembler.activeGroups).toBe(0);
    expect(assembler.counters.fecGroupsGivenUp).toBe(0);
    feed(g, 1);
    expect(streams).toHaveLength(1);
  });

  it('counts malformed datagrams and carries on', async () => {
    const { assembler, streams, feed } = setup();
    const g = makeGroup(5, 0, 2);
    const good = encodeLiveFragment(g.fragments[0]?.[0] as LiveFragment);
    assembler.receive(new Uint8Array(0));
    assembler.receive(Uint8Array.of(9, 9, 9));
    const badType = good.slice();
    badType[0] = 7;
    assembler.receive(badType);
    feed(g, 0, (f) => f.kind === 'data' && f.index === 0);
    // Well-formed on its own, but it disagrees with its group (another capture time).
    assembler.receive(encodeLiveFragment({ ...(g.fragments[0]?.[0] as LiveFragment), captureUs: 1 }));
    expect(assembler.counters.malformed).toBe(4);
    assembler.receive(good);
    await settle();
    expect(streams).toHaveLength(1);
    expect(streams[0]?.hex).toBe(streamHex(g, 1));
  });

  it('starts each group with its own rendition (a switch at a group boundary)', async () => {
    const { streams, feed } = setup();
    const g5 = makeGroup(5, 0, 1);
    const g6 = makeGroup(6, 2, 1);
    feed(g5, 0);
    feed(g6, 0);
    await settle();
    expect(streams.map((s) => s.hex)).toEqual([streamHex(g5), streamHex(g6)]);
    const parser = new LiveGroupParser();
    parser.push(Uint8Array.from(streams[1]?.bytes ?? []));
    expect(parser.header?.rendition).toBe(2);
  });

  it('ends the open groups in an error when the session closes', async () => {
    const { assembler, streams, feed, nacks, clock } = setup();
    feed(makeGroup(5), 0);
    assembler.close('session closed');
    await settle();
    expect(String(streams[0]?.error)).toMatch(/session closed/);
    feed(makeGroup(6), 0);
    clock.advance(1000);
    expect(streams).toHaveLength(1);
    expect(nacks).toEqual([]);
  });

  it('keeps going when sending a NACK throws', () => {
    const clock = new FakeClock();
    const assembler = new LiveDatagramAssembler({
      deliver: () => undefined,
      sendDatagram: () => {
        throw new Error('writable closed');
      },
      keepMs: 300,
      clock,
    });
    const g = makeGroup(5, 0, 2, 0);
    for (const f of g.fragments[0] ?? []) if (f.index !== 0) assembler.receive(encodeLiveFragment(f));
    expect(() => clock.advance(OVERDUE_MS)).not.toThrow();
    expect(assembler.counters.nacksSent).toBe(1);
  });
});

/** A WebTransport stand-in with datagrams the test writes and NACKs it records. */
function fakeTransport(options: { writableFails?: boolean } = {}): {
  transport: WebTransport;
  incoming: ReadableStreamDefaultController<Uint8Array>;
  written: Uint8Array[];
} {
  let incoming: ReadableStreamDefaultController<Uint8Array> | undefined;
  const readable = new ReadableStream<Uint8Array>({ start: (c) => void (incoming = c) });
  const written: Uint8Array[] = [];
  const writable = new WritableStream<Uint8Array>({
    write: (chunk) => {
      if (options.writableFails) throw new Error('datagrams closed');
      written.push(chunk);
    },
  });
  const fake = {
    ready: Promise.resolve(),
    closed: new Promise(() => undefined),
    incomingUnidirectionalStreams: new ReadableStream(),
    datagrams: { readable, writable },
    close: () => undefined,
  };
  // The session only uses the members above.
  return { transport: fake as unknown as WebTransport, incoming: incoming as ReadableStreamDefaultController<Uint8Array>, written };
}

async function connectFake(url: string, transport: WebTransport, keepMs = 300): Promise<Session> {
  const early = { url, certHash: new Uint8Array(32), startMs: 0, transport };
  return Session.connect(url, null, new TelemetryLog(), null, [], early, { keepMs, counters: newLiveDatagramCounters() });
}

describe('Session with live.fec', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('is on datagrams exactly when its URL carries live.fec', () => {
    expect(wantsLiveDatagrams('https://127.0.0.1:4433/stream?cc=bbr&live.fec=4')).toBe(true);
    expect(wantsLiveDatagrams('https://127.0.0.1:4433/stream?live.fec=0')).toBe(true);
    expect(wantsLiveDatagrams('https://127.0.0.1:4433/stream?live.keep_ms=250')).toBe(false);
  });

  it('turns its datagrams into group streams for liveGroups and writes NACKs as datagrams', async () => {
    vi.stubGlobal('WebTransport', class {});
    const { transport, incoming, written } = fakeTransport();
    const session = await connectFake('https://127.0.0.1:4433/stream?live.fec=2', transport);
    const streams: Collected[] = [];
    session.liveGroups.setHandler((stream) => streams.push(new Collected(stream)));
    const g = makeGroup(5, 1, 2);
    incoming.enqueue(Uint8Array.of(1, 2, 3)); // malformed: counted, the loop carries on
    for (const f of g.fragments[0] ?? []) incoming.enqueue(encodeLiveFragment(f));
    // Chunk 1 loses both fragments of parity class 0; chunk 0 is complete.
    for (const f of g.fragments[1] ?? []) if (!(f.kind === 'data' && f.index !== 1)) incoming.enqueue(encodeLiveFragment(f));
    await settle();
    expect(session.liveDatagrams?.counters.malformed).toBe(1);
    expect(streams[0]?.hex).toBe(streamHex(g, 1));
    await new Promise((resolve) => setTimeout(resolve, OVERDUE_MS + 30));
    expect(written.map(decodeLiveNack)).toEqual([{ rendition: 1, group: 5, chunkIndex: 1, dataFragments: 3, missing: [0, 2] }]);
    incoming.enqueue(dataFragment(g, 1, 0, true));
    await settle();
    expect(streams[0]?.hex).toBe(streamHex(g));
    expect(streams[0]?.done).toBe(true);
    incoming.close();
  });

  it('ignores NACKs it cannot write', async () => {
    vi.stubGlobal('WebTransport', class {});
    const { transport, incoming } = fakeTransport({ writableFails: true });
    const session = await connectFake('https://127.0.0.1:4433/stream?live.fec=0', transport);
    const g = makeGroup(5, 0, 2, 0);
    for (const f of g.fragments[0] ?? []) if (f.index !== 0) incoming.enqueue(encodeLiveFragment(f));
    await new Promise((resolve) => setTimeout(resolve, OVERDUE_MS + 30));
    expect(session.liveDatagrams?.counters.nacksSent).toBe(1);
    incoming.close();
  });

  it('reads no datagrams without live.fec', async () => {
    vi.stubGlobal('WebTransport', class {});
    const { transport } = fakeTransport();
    const session = await connectFake('https://127.0.0.1:4433/stream?live.keep_ms=250', transport);
    expect(session.liveDatagrams).toBeNull();
  });
});

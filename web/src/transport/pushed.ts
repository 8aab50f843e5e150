/**
 * Responses the server pushes at session start (shared/PROTOCOL.md, `vod.first`): the CONNECT
 * URL names rendition R's init segment and its segment S, and the server answers them on
 * PUSHED_RESPONSE streams as soon as it accepts the session, a round trip before a request
 * sent after the session is ready could reach it. The player still calls `Session.request`
 * for them; the session hands it the pushed stream instead (each at most once).
 */
import { defaultStartRendition, type PlayerParams } from '../params';
import { RESPONSE_HEADER_BYTES, decodeResponseHeader, kindName, type KindName, type ResponseHeader } from '../protocol';
import { nextChunk } from './read';
import { prependChunk } from './unistreams';

/**
 * How long a claimed response waits for its pushed stream before the request is sent after
 * all (a server that ignored `vod.first`). Pushed streams open right after the CONNECT
 * answer, so they normally arrive with the session.
 */
export const PUSH_WAIT_MS = 1500;

export interface PushKey {
  kind: KindName;
  rendition: number;
  segment: number;
}

/** The responses `vod.first=R:S` makes the server push: R's init segment, then its segment S. */
export function vodFirstPushes(rendition: number, segment: number): PushKey[] {
  return [
    { kind: 'INIT', rendition, segment: 0 },
    { kind: 'SEGMENT', rendition, segment },
  ];
}

/**
 * What the first session has pushed: with startRendition=lowest a VOD player's first requests
 * are rendition 0's init and segment 0 (watch/player.ts), known before the manifest; with
 * `abr` the rendition depends on the manifest, so the manifest is pushed (`vod.manifest=1`).
 */
export function firstPushes(params: Pick<PlayerParams, 'mode' | 'startRendition'>): PushKey[] {
  if (params.mode === 'live') return [];
  return (params.startRendition ?? defaultStartRendition(params.mode)) === 'lowest' ? vodFirstPushes(0, 0) : [MANIFEST_PUSH];
}

export const MANIFEST_PUSH: PushKey = { kind: 'MANIFEST', rendition: 0, segment: 0 };

/** The session parameters that ask the server for `pushes` (firstPushes' results). */
export function pushParameters(pushes: readonly PushKey[]): [string, string][] {
  const segment = pushes.find((p) => p.kind === 'SEGMENT');
  const out: [string, string][] = [];
  if (segment) out.push(['vod.first', `${segment.rendition}:${segment.segment}`]);
  if (pushes.some((p) => p.kind === 'MANIFEST')) out.push(['vod.manifest', '1']);
  return out;
}

const keyOf = (kind: KindName, rendition: number, segment: number): string => `${kind}:${rendition}:${segment}`;

/** A pushed response stream (header included) and when its first byte arrived (page clock). */
export interface PushedStream {
  stream: ReadableStream<Uint8Array>;
  firstByteMs: number;
}

type Slot =
  | { state: 'expected' }
  | { state: 'arrived'; pushed: PushedStream }
  | { state: 'claimed'; resolve: (pushed: PushedStream | null) => void }
  | { state: 'done' };

export interface Timer {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimer: Timer = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class PushedResponses {
  private readonly slots = new Map<string, Slot>();
  /** Pushed streams nobody asked for, or that came after their request was sent anyway. */
  cancelled = 0;

  /**
   * `expected`: what the CONNECT asked for. `requestedAtMs`: when it was sent (page clock), the
   * start of these responses' timing (their request travelled with the CONNECT).
   */
  constructor(
    expected: readonly PushKey[],
    readonly requestedAtMs: number,
    private readonly timer: Timer = realTimer,
    private readonly waitMs = PUSH_WAIT_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    for (const key of expected) this.slots.set(keyOf(key.kind, key.rendition, key.segment), { state: 'expected' });
  }

  /**
   * The pushed response stream for this request (header included), at most once per key: a
   * promise of it (null after PUSH_WAIT_MS without it: send the request), or null at once when
   * nothing was pushed for it.
   */
  claim(kind: KindName, rendition: number, segment: number): Promise<PushedStream | null> | null {
    const key = keyOf(kind, rendition, segment);
    const slot = this.slots.get(key);
    if (slot === undefined) return null;
    if (slot.state === 'arrived') {
      this.slots.set(key, { state: 'done' });
      return Promise.resolve(slot.pushed);
    }
    if (slot.state !== 'expected') return null;
    return new Promise((resolve) => {
      const handle = this.timer.set(() => {
        this.slots.set(key, { state: 'done' });
        resolve(null);
      }, this.waitMs);
      this.slots.set(key, {
        state: 'claimed',
        resolve: (pushed) => {
          this.timer.clear(handle);
          resolve(pushed);
        },
      });
    });
  }

  /**
   * A PUSHED_RESPONSE stream (after its type byte): its header says which request it answers.
   * Resolves once it is handed over or cancelled (not expected, already taken, too late, or
   * shorter than a header).
   */
  async deliver(stream: ReadableStream<Uint8Array>): Promise<void> {
    const reader = stream.getReader();
    let head = new Uint8Array(0);
    let firstByteMs: number | null = null;
    try {
      while (head.length < RESPONSE_HEADER_BYTES) {
        const chunk = await nextChunk(reader);
        if (chunk === null) break;
        firstByteMs ??= this.now();
        const joined = new Uint8Array(head.length + chunk.length);
        joined.set(head, 0);
        joined.set(chunk, head.length);
        head = joined;
      }
    } catch {
      reader.releaseLock();
      return; // reset before its header: the request times out and is sent
    }
    let header: ResponseHeader | null = null;
    try {
      if (head.length >= RESPONSE_HEADER_BYTES) header = decodeResponseHeader(head);
    } catch {
      header = null; // not a response this client reads (e.g. another protocol version)
    }
    const kind = header === null ? undefined : kindName(header.kind);
    const key = header === null || kind === undefined ? null : keyOf(kind, header.rendition, header.segment);
    const slot = key === null ? undefined : this.slots.get(key);
    if (key === null || slot === undefined || slot.state === 'arrived' || slot.state === 'done') {
      this.cancelled += 1;
      await reader.cancel('pushed response not wanted').catch(() => undefined);
      return;
    }
    const pushed = { stream: prependChunk(head, reader), firstByteMs: firstByteMs ?? this.now() };
    if (slot.state === 'claimed') {
      this.slots.set(key, { state: 'done' });
      slot.resolve(pushed);
    } else {
      this.slots.set(key, { state: 'arrived', pushed });
    }
  }
}

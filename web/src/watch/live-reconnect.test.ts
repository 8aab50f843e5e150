import { describe, expect, it } from 'vitest';
import type { KindName, LiveInfo } from '../protocol';
import type { Response } from '../transport/response';
import { TransportError } from '../transport/session';
import { fakeClockReconnectOptions } from '../transport/reconnect.testutil';
import { newLiveDatagramCounters, type LiveDatagramCounters } from '../transport/live-datagrams';
import type { LiveGroupHandler } from '../transport/unistreams';
import { ReconnectingLiveSession, rejoinLiveEdge, sameTimeline, type LiveSessionLike, type RejoiningPlayer } from './live-reconnect';

function info(epochUs: number, ladder = [1_500_000, 3_000_000]): LiveInfo {
  return {
    epoch_us: epochUs,
    fps: 30,
    fps_num: 30,
    fps_den: 1,
    frames_per_group: 15,
    group_duration_us: 500_000,
    loop_groups: 40,
    loop_frames: 600,
    live_edge_group: 7,
    server_time_us: 0,
    renditions: ladder.map((b) => ({ id: `${b / 1000}k`, bitrate_bps: b, width: 640, height: 360, codec: 'avc1.64001f', mime: 'video/mp4' })),
  };
}

function ok(body: Uint8Array): Response {
  return {
    header: { status: 'OK', statusCode: 0, kind: 0, rendition: 0, segment: 0, bodyLength: body.length, serverTimeUs: 0 },
    body,
    timing: { startMs: 0, ttfbMs: 1, downloadMs: 1, transferMs: 0, bytes: body.length, throughputKbps: 0 },
  } as unknown as Response;
}

class FakeLiveSession implements LiveSessionLike {
  closedReason: string | null = null;
  liveDatagrams: { counters: LiveDatagramCounters } | null = null;
  handler: LiveGroupHandler | null = null;
  readonly asked: string[] = [];
  readonly closed: Promise<string>;
  readonly liveGroups = { setHandler: (h: LiveGroupHandler | null): void => void (this.handler = h) };
  private end: (reason: string) => void = () => undefined;
  constructor(
    readonly url: string,
    private readonly channel: LiveInfo = info(1),
  ) {
    this.closed = new Promise((resolve) => (this.end = resolve));
  }
  /** The connection is lost (server gone, QUIC gave up). */
  lose(reason = 'WebTransport session failed: connection lost'): void {
    this.closedReason = reason;
    this.end(reason);
  }
  request(kind: KindName, rendition = 0, segment = 0): Promise<Response> {
    this.asked.push(`${kind} ${rendition} ${segment}`);
    if (this.closedReason !== null) return Promise.reject(new TransportError(this.closedReason));
    return Promise.resolve(ok(new TextEncoder().encode(JSON.stringify(kind === 'LIVE_INFO' ? this.channel : {}))));
  }
  close(): void {
    this.lose('player closed');
  }
}

const options = fakeClockReconnectOptions;

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
};

describe('ReconnectingLiveSession', () => {
  it('redials with backoff when the session is lost without a request, moves the group handler and asks for a rejoin', async () => {
    const first = new FakeLiveSession('a');
    const second = new FakeLiveSession('b');
    const dials = [() => Promise.reject(new Error('refused')), () => Promise.resolve(second)];
    const o = options();
    const live = new ReconnectingLiveSession(first, () => (dials.shift() as () => Promise<FakeLiveSession>)(), o);
    let rejoins = 0;
    live.onRejoin = () => void (rejoins += 1);
    const handler: LiveGroupHandler = () => undefined;
    live.liveGroups.setHandler(handler);
    expect(first.handler).toBe(handler);

    first.lose();
    await flush();
    expect(o.slept).toEqual([250, 500]);
    expect(live.reconnects).toBe(1);
    expect(rejoins).toBe(1);
    expect(second.handler).toBe(handler);
    expect(live.closedReason).toBeNull();
    await live.request('LIVE_INFO');
    expect(second.asked).toEqual(['LIVE_INFO 0 0']);
  });

  it("reports the current session's datagram counters (shared by the sessions), null on streams", async () => {
    const counters = newLiveDatagramCounters();
    const first = new FakeLiveSession('a');
    first.liveDatagrams = { counters };
    const second = new FakeLiveSession('b');
    second.liveDatagrams = { counters };
    const live = new ReconnectingLiveSession(first, () => Promise.resolve(second), options());
    counters.nacksSent = 3;
    expect(live.datagramCounters()?.nacksSent).toBe(3);
    first.lose();
    await flush();
    expect(live.reconnects).toBe(1);
    expect(live.datagramCounters()).toBe(counters);
    expect(new ReconnectingLiveSession(new FakeLiveSession('c'), () => Promise.reject(new Error('no')), options()).datagramCounters()).toBeNull();
  });

  it('does not redial a session the player closed', async () => {
    const first = new FakeLiveSession('a');
    let dialled = 0;
    const live = new ReconnectingLiveSession(first, () => ((dialled += 1), Promise.resolve(new FakeLiveSession('b'))), options());
    live.close();
    await flush();
    expect(dialled).toBe(0);
  });

  it('gives up after giveUpAfterMs and says so', async () => {
    const first = new FakeLiveSession('a');
    const live = new ReconnectingLiveSession(first, () => Promise.reject(new Error('refused')), options());
    first.lose();
    await flush();
    expect(live.closedReason).toMatch(/reconnecting failed for 10 s: .*refused/);
  });
});

class FakePlayer implements RejoiningPlayer {
  readonly calls: string[] = [];
  constructor(public info: LiveInfo | null) {}
  async restartTimeline(next: LiveInfo): Promise<void> {
    this.calls.push(`restart ${next.epoch_us}`);
    this.info = next;
  }
  async resubscribeAtEdge(): Promise<void> {
    this.calls.push('subscribe');
  }
}

describe('rejoinLiveEdge', () => {
  it('on the same timeline, only subscribes at the live edge again', async () => {
    const player = new FakePlayer(info(1));
    const session = new FakeLiveSession('b', info(1));
    await rejoinLiveEdge(player, session);
    expect(session.asked).toEqual(['LIVE_INFO 0 0']);
    expect(player.calls).toEqual(['subscribe']);
  });

  it('after a server restart (new epoch), starts a new timeline first', async () => {
    const player = new FakePlayer(info(1));
    await rejoinLiveEdge(player, new FakeLiveSession('b', info(2)));
    expect(player.calls).toEqual(['restart 2', 'subscribe']);
  });

  it('refuses a channel that came back with another ladder', async () => {
    const player = new FakePlayer(info(1));
    await expect(rejoinLiveEdge(player, new FakeLiveSession('b', info(2, [300_000])))).rejects.toThrow(/other media/);
    expect(player.calls).toEqual([]);
  });

  it('before the player has started, leaves it to the retried start requests', async () => {
    const player = new FakePlayer(null);
    const session = new FakeLiveSession('b');
    await rejoinLiveEdge(player, session);
    expect(session.asked).toEqual([]);
  });

  it('compares timelines by epoch and channel', () => {
    expect(sameTimeline(info(1), info(1))).toBe(true);
    expect(sameTimeline(info(1), info(2))).toBe(false);
    expect(sameTimeline(info(1), { ...info(1), frames_per_group: 30 })).toBe(false);
  });
});

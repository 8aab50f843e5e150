/**
 * The live player across lost sessions (#17): the same redial with backoff as VOD
 * (transport/reconnect.ts), then a rejoin at the live edge.
 *
 * A live subscription only receives, so a dead session would go unnoticed until a request
 * failed: the session's `closed` promise starts the redial. On the new session the player asks
 * for LIVE_INFO again. The same server run (same epoch) keeps the timeline: the player
 * SUBSCRIBEs at the live edge again and its control loop jumps over the groups the outage cost.
 * A restarted server has a new epoch, so new media times: the player drops the old timeline's
 * media and starts again from the new live edge. Either way the playhead had nothing to play
 * while the session was down: the sampler counts that as a stall, as it is.
 */

import { parseLiveInfo, type KindName, type LiveInfo } from '../protocol';
import { ReconnectingSession, type ReconnectOptions, type SessionLike } from '../transport/reconnect';
import type { Response } from '../transport/response';
import { TransportError } from '../transport/session';
import type { LiveDatagramCounters } from '../transport/live-datagrams';
import type { LiveGroupHandler } from '../transport/unistreams';
import type { LiveSession } from './live';

/** What the live reconnecting wrapper needs of one session (Session; a fake in tests). */
export interface LiveSessionLike extends SessionLike {
  readonly liveGroups: { setHandler(handler: LiveGroupHandler | null): void };
  /** Resolves once the session has closed or failed, with the reason. */
  readonly closed: Promise<string>;
  /** Groups as datagrams (`live.fec`): the assembler's counters, else null or absent. */
  readonly liveDatagrams?: { readonly counters: LiveDatagramCounters } | null;
}

/** A live session that redials when its session is lost and tells the player to rejoin. */
export class ReconnectingLiveSession implements LiveSession {
  /** Called once a new session is up (the player rejoins the live edge there). */
  onRejoin: (() => void) | null = null;
  readonly liveGroups = {
    setHandler: (handler: LiveGroupHandler | null): void => {
      this.handler = handler;
      this.inner.current.liveGroups.setHandler(handler);
    },
  };
  private readonly inner: ReconnectingSession<LiveSessionLike>;
  private handler: LiveGroupHandler | null = null;
  private closedByPlayer = false;

  constructor(first: LiveSessionLike, dial: () => Promise<LiveSessionLike>, options: ReconnectOptions) {
    this.inner = new ReconnectingSession(first, dial, options);
    this.inner.onSession = (session) => {
      session.liveGroups.setHandler(this.handler);
      this.watch(session);
      this.onRejoin?.();
    };
    this.watch(first);
  }

  /** Sessions opened after the first. */
  get reconnects(): number {
    return this.inner.reconnects;
  }

  get url(): string {
    return this.inner.url;
  }

  /** Only once reconnecting has been given up. */
  get closedReason(): string | null {
    return this.inner.closedReason;
  }

  request(kind: KindName, rendition = 0, segment = 0): Promise<Response> {
    return this.inner.request(kind, rendition, segment);
  }

  /** The current session's (its sessions share one counters object: boot.ts liveDatagramSetup). */
  datagramCounters(): LiveDatagramCounters | null {
    return this.inner.current.liveDatagrams?.counters ?? null;
  }

  close(): void {
    this.closedByPlayer = true;
    this.inner.close();
  }

  private watch(session: LiveSessionLike): void {
    void session.closed.then((reason) => {
      if (this.closedByPlayer || this.inner.current !== session) return;
      // Given up: `closedReason` says so and the page shows it.
      this.inner.lost(session, new TransportError(reason)).catch(() => undefined);
    });
  }
}

/** Whether two LIVE_INFO answers describe the same timeline (one server run, same media). */
export function sameTimeline(a: LiveInfo, b: LiveInfo): boolean {
  return a.epoch_us === b.epoch_us && sameChannel(a, b);
}

/** Whether two LIVE_INFO answers have the same frame timing and ladder (epochs aside). */
export function sameChannel(a: LiveInfo, b: LiveInfo): boolean {
  return (
    a.fps_num === b.fps_num &&
    a.fps_den === b.fps_den &&
    a.frames_per_group === b.frames_per_group &&
    a.renditions.length === b.renditions.length &&
    a.renditions.every((r, i) => r.id === b.renditions[i]?.id && r.bitrate_bps === b.renditions[i]?.bitrate_bps && r.mime === b.renditions[i]?.mime)
  );
}

/** The live player as a rejoin needs it (LivePlayer). */
export interface RejoiningPlayer {
  readonly info: LiveInfo | null;
  /** Drop the old timeline (media, groups, init segments) and start again on `info`'s. */
  restartTimeline(info: LiveInfo): Promise<void>;
  /** SUBSCRIBE at the live edge again (the new session has no subscription). */
  resubscribeAtEdge(): Promise<void>;
}

/** On a new session: LIVE_INFO, then the same or a new timeline, then SUBSCRIBE at the edge. */
export async function rejoinLiveEdge(player: RejoiningPlayer, session: Pick<LiveSession, 'request'>): Promise<void> {
  const old = player.info;
  if (old === null) return; // not started yet: the start's own requests are retried instead
  const info = parseLiveInfo((await session.request('LIVE_INFO')).body);
  if (!sameTimeline(old, info)) {
    if (!sameChannel(old, info)) {
      throw new Error('the live channel came back with other media (frame rate, groups or ladder changed): reload the page');
    }
    await player.restartTimeline(info);
  }
  await player.resubscribeAtEdge();
}

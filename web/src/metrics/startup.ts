/**
 * Where VOD startup goes (web/README.md, "Startup phases"): the page clock time of each step
 * from the play request to the first frame, kept pure (times are passed in) so tests use fake
 * clocks. `metrics().startupPhases` reports every step as ms since the play request; a step
 * done before the play request (e.g. the page loaded first, `autoplay=0`) is negative, a step
 * not reached yet is null.
 */

/** The steps, in the order they happen on a VOD startup. */
export const STARTUP_PHASES = [
  /** The player's module started running (page loaded and parsed). */
  'scriptStartMs',
  /** GET /api/config answered (the certificate hash is known). */
  'configReadyMs',
  /** `new WebTransport()` called (VOD autoplay: by index.html, before the modules run). */
  'sessionStartMs',
  /** The MediaSource is open (sourceopen). */
  'mediaSourceOpenMs',
  /** The WebTransport session is ready (QUIC handshake and extended CONNECT done). */
  'sessionReadyMs',
  /** The first request is written and its stream closed; a pushed one (vod.first): the CONNECT. */
  'requestSentMs',
  /** The first response byte of any request. */
  'firstByteMs',
  /** The init segment is appended to the SourceBuffer. */
  'initAppendedMs',
  /** The first media chunk is appended (the player then starts playback). */
  'firstChunkAppendedMs',
  /** The first frame the compositor presented after the play request (requestVideoFrameCallback). */
  'firstFrameMs',
] as const;

export type StartupPhase = (typeof STARTUP_PHASES)[number];

/** `metrics().startupPhases`: ms since the play request per step (null: not yet). */
export type StartupPhases = Record<StartupPhase, number | null>;

export class StartupTimeline {
  private readonly at = new Map<StartupPhase, number>();
  private playRequestMs: number | null = null;

  /** The play request, on the page clock (0 with autoplay: navigation start). */
  playRequested(tMs: number): void {
    this.playRequestMs ??= tMs;
  }

  /**
   * Step `phase` happened at `tMs` (page clock). A step can be reported late or more than once
   * (several requests race to the first byte): the earliest time counts.
   */
  mark(phase: StartupPhase, tMs: number): void {
    if (!Number.isFinite(tMs)) return;
    const prev = this.at.get(phase);
    if (prev === undefined || tMs < prev) this.at.set(phase, tMs);
  }

  /**
   * A frame was presented at `tMs`: the first frame if at or after the play request. False
   * (keep watching) before the play request or when there is none yet.
   */
  frameShown(tMs: number): boolean {
    if (this.playRequestMs === null || !(tMs >= this.playRequestMs)) return false;
    this.mark('firstFrameMs', tMs);
    return true;
  }

  has(phase: StartupPhase): boolean {
    return this.at.has(phase);
  }

  /** Every step as ms since the play request; all null before the play request. */
  snapshot(): StartupPhases {
    const origin = this.playRequestMs;
    const out = {} as StartupPhases;
    for (const phase of STARTUP_PHASES) {
      const t = this.at.get(phase);
      out[phase] = origin === null || t === undefined ? null : round(t - origin);
    }
    return out;
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

import type { EventLoopLagSnapshot } from './event-loop-lag';
import type { PlaybackSnapshot } from './playback';
import type { StartupPhases } from './startup';

/** Per-segment download record (media segments only; init segments are not listed). */
export interface SegmentRecord {
  /** Segment index in the manifest. */
  index: number;
  /** Rendition index (position in the manifest's `renditions`). */
  rendition: number;
  renditionId: string;
  /** Ladder bitrate of the rendition, kbit/s. */
  bitrateKbps: number;
  /** Response body bytes (the 24-byte header excluded). */
  bytes: number;
  /** Request start (before opening the stream) → last body byte, ms. */
  downloadMs: number;
  /** bytes × 8 / downloadMs (kbit/s). */
  throughputKbps: number;
  /** Request start → first response byte, ms. */
  ttfbMs: number;
  /** Request start, ms on the page clock (performance.now()). */
  requestedAtMs: number;
  /** Buffer ahead of the playhead when the request was made, s. */
  bufferAtRequestS: number;
}

export type PlayerState =
  | 'loading' // before the play request
  | 'startup' // play requested, no frame played yet
  | 'playing'
  | 'stalled'
  | 'paused'
  | 'ended'
  | 'error';

/** One live ABR switch (mode=live&abr=1; web/README.md, "Live ABR"). */
export interface BitrateSwitch {
  /** When the player decided, ms on the page clock (performance.now()). */
  atMs: number;
  /** The first group in the new rendition (SUBSCRIBE's answer); null until answered. */
  group: number | null;
  /** Rendition ids, and their ladder bitrates in kbit/s. */
  from: string;
  to: string;
  fromKbps: number;
  toKbps: number;
  /** Why (src/watch/live-abr.ts): startup, throughput, dropped, latency or buffer. */
  reason: string;
  /** Throughput of the group decided on (idle gaps removed), kbit/s. */
  throughputKbps: number | null;
  /** That group's last chunk: arrival − capture − base delay, ms. */
  queueDelayMs: number | null;
  /** The playhead behind the live edge then, ms (null before playback). */
  latencyMs: number | null;
  /** Buffered ahead of the playhead then, ms. */
  bufferMs: number;
}

/**
 * Live-mode fields of the metrics (web/README.md, "Live"). In VOD modes every field but `mode`
 * and `playbackRate` is null.
 */
export interface LiveMetrics {
  mode: 'fixed' | 'abr' | 'live';
  targetLatencyMs: number | null;
  /** Glass-to-glass latency (burned-in capture time → shown), over the frames shown, ms. */
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  latencyMeanMs: number | null;
  latencyMaxMs: number | null;
  latencyLastMs: number | null;
  /** The playhead's lag behind the live edge now: now − epoch − currentTime, ms. */
  mediaLatencyMs: number | null;
  /** The playout delay the player keeps the playhead at (live-playout.ts: as early as the frames' measured delays allow, at most the target), ms. */
  playoutDelayMs: number | null;
  /** Frames never shown between two shown ones (gaps in the frame codes). */
  framesSkipped: number | null;
  /** Frames shown whose code was read. */
  framesShown: number | null;
  /** Frames shown whose code could not be read (not in the latency figures). */
  framesUnreadable: number | null;
  /**
   * Freezes by WebRTC's rule (webrtc-stats freezeCount: a rendered-frame interval ≥ max(3 × mean,
   * mean + 150 ms); latency/freezes.ts), from the shown frames' times: the count to compare with
   * the WebRTC arm's. `stallCount` (under one frame buffered) is stricter.
   */
  freezeCount: number | null;
  /** Sum of those freezes' intervals, s. */
  totalFreezesDurationS: number | null;
  /** LIVE_GROUP streams received. */
  groupsReceived: number | null;
  /** Groups of the subscription not played to the end: reset by the server, abandoned, or skipped over. */
  groupsDropped: number | null;
  /**
   * Live over datagrams (`fec`; shared/PROTOCOL.md "Live over datagrams"), counted over the
   * player's sessions; null on LIVE_GROUP streams and in the VOD modes. Data fragments rebuilt
   * from parity.
   */
  fecRecovered: number | null;
  /** LIVE_NACKs sent (re-NACKs included). */
  nacksSent: number | null;
  /** Retransmitted data fragments that arrived while still missing. */
  fragmentsRetransmitted: number | null;
  /** Groups given up still incomplete `keep` (else `latency`) after a newer group began; groups the player cancelled are not counted. */
  fecGroupsGivenUp: number | null;
  /** Groups the server said it superseded (LIVE_GONE) before they were complete here. */
  fecGroupsSuperseded: number | null;
  /** Seeks forward by the player: skips to lower the latency, and jumps over gaps. */
  liveSeeks: number | null;
  /** video.playbackRate now. */
  playbackRate: number;
  /** Live ABR's switches with their reasons, oldest first; null without live ABR. */
  bitrateSwitchLog: BitrateSwitch[] | null;
}

/**
 * Whether the viewer had the CPU it needed (web/README.md, "CPU health"): frames the browser
 * dropped, and how late the main thread runs its timers after startup.
 */
export interface HealthMetrics extends EventLoopLagSnapshot {
  /** `getVideoPlaybackQuality().droppedVideoFrames` now (null if unavailable). */
  droppedFrames: number | null;
  /** `getVideoPlaybackQuality().totalVideoFrames` now (null if unavailable). */
  decodedFrames: number | null;
  /** Of droppedFrames, those dropped during a stall or within 1 s after it: the network's, not the CPU's (src/metrics/dropped-frames.ts). */
  droppedFramesNearStalls: number | null;
}

/** `window.pccstream.metrics()`: JSON-serialisable; definitions in web/README.md. */
export interface Metrics extends Omit<PlaybackSnapshot, 'state'>, LiveMetrics, HealthMetrics {
  /** Each startup step in ms since the play request (src/metrics/startup.ts). */
  startupPhases: StartupPhases;
  segments: SegmentRecord[];
  error: string | null;
  state: PlayerState;
  bufferSeconds: number;
  currentTime: number;
  /** The picture's size now (video.videoWidth/videoHeight; null before the first frame), as the WebRTC receiver's. */
  frameWidth: number | null;
  frameHeight: number | null;
}

import type { PlaybackSnapshot } from './playback';

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

/** `window.pccstream.metrics()`: JSON-serialisable; definitions in web/README.md. */
export interface Metrics extends Omit<PlaybackSnapshot, 'state'> {
  segments: SegmentRecord[];
  error: string | null;
  state: PlayerState;
  bufferSeconds: number;
  currentTime: number;
}

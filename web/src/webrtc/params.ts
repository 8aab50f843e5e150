/**
 * URL parameters of the WebRTC pages (webrtc-send.html, webrtc-recv.html; table in
 * web/README.md, "WebRTC arm"). Pure: returns the parameters and every problem found.
 */

export type DegradationPreference = 'maintain-framerate' | 'maintain-resolution' | 'balanced';
export const DEGRADATION_PREFERENCES: readonly DegradationPreference[] = ['maintain-framerate', 'maintain-resolution', 'balanced'];
export const CODECS = ['vp8', 'vp9', 'h264', 'av1'] as const;
export type Codec = (typeof CODECS)[number];

/** Static credentials of the local coturn (server/pccstream/webrtc/turn.py). */
export const DEFAULT_TURN_USERNAME = 'pccstream';
export const DEFAULT_TURN_CREDENTIAL = 'pccstream';
export const DEFAULT_ROOM = 'default';
export const DEFAULT_BITRATE_BPS = 2_500_000;
export const DEFAULT_FPS = 30;

export interface CallParams {
  room: string;
  /** The TURN server this page uses (the receiver's is the emulator in front of coturn). */
  iceServer: RTCIceServer;
}

export interface ReceiverParams extends CallParams {
  /**
   * `sender`: the query of a sender page to embed (its TURN URL etc.; the room is the
   * receiver's). null: the sender runs elsewhere (`pccstream webrtc call`, the e2e test).
   */
  sender: string | null;
}

export interface SenderParams extends CallParams {
  /** RTCRtpEncodingParameters.maxBitrate, bit/s. */
  maxBitrateBps: number;
  fps: number;
  /** A rendition id of /media/live/ (null: the highest whose bitrate is at most maxBitrateBps). */
  rendition: string | null;
  degradation: DegradationPreference;
  /** Preferred codec (null: the browser's default order, VP8 first in Chromium). */
  codec: Codec | null;
}

export interface Parsed<T> {
  params: T;
  errors: string[];
  warnings: string[];
}

const ROOM = /^[A-Za-z0-9_-]{1,64}$/;
const COMMON = ['room', 'turn', 'turnUser', 'turnPass'];
const SENDER_ONLY = ['bitrate', 'fps', 'rendition', 'degradation', 'codec', 'compact'];
/** The receiver's own, and the dashboard's (web/src/dashboard/index.ts, parsed there). */
const RECEIVER_ONLY = ['mode', 'sender', 'dashboard', 'origin', 'window', 'compact'];

function parseCommon(query: URLSearchParams, errors: string[]): CallParams {
  const room = query.get('room') ?? DEFAULT_ROOM;
  if (!ROOM.test(room)) errors.push(`room=${room}: 1-64 characters of A-Z a-z 0-9 _ -`);
  const turn = query.get('turn');
  if (turn === null) errors.push('turn is missing: give the TURN URL, e.g. turn=turn:127.0.0.1:3478?transport=udp');
  else if (!/^turns?:[^\s]+$/.test(turn)) errors.push(`turn=${turn}: not a turn: URL (turn:HOST:PORT?transport=udp)`);
  return {
    room,
    iceServer: {
      urls: turn ?? '',
      username: query.get('turnUser') ?? DEFAULT_TURN_USERNAME,
      credential: query.get('turnPass') ?? DEFAULT_TURN_CREDENTIAL,
    },
  };
}

function unknownParams(query: URLSearchParams, known: string[], warnings: string[]): void {
  for (const key of new Set(query.keys())) if (!known.includes(key)) warnings.push(`unknown parameter ${key} (ignored)`);
}

export function parseReceiverParams(search: string): Parsed<ReceiverParams> {
  const query = new URLSearchParams(search);
  const errors: string[] = [];
  const warnings: string[] = [];
  const common = parseCommon(query, errors);
  const mode = query.get('mode');
  if (mode !== null && mode !== 'webrtc') errors.push(`mode=${mode}: this is the WebRTC receiver (mode=webrtc or none)`);
  const sender = query.get('sender');
  if (sender !== null) {
    const senderQuery = new URLSearchParams(sender);
    const turn = senderQuery.get('turn');
    if (turn === null || !/^turns?:[^\s]+$/.test(turn)) errors.push('sender: the embedded sender\'s query needs its turn=turn:HOST:PORT?transport=udp');
  }
  unknownParams(query, [...COMMON, ...RECEIVER_ONLY], warnings);
  return { params: { ...common, sender }, errors, warnings };
}

export function parseSenderParams(search: string): Parsed<SenderParams> {
  const query = new URLSearchParams(search);
  const errors: string[] = [];
  const warnings: string[] = [];
  const common = parseCommon(query, errors);
  let maxBitrateBps = DEFAULT_BITRATE_BPS;
  const bitrate = query.get('bitrate');
  if (bitrate !== null) {
    const value = Number(bitrate);
    if (!/^\d+$/.test(bitrate) || value < 30_000 || value > 50_000_000) errors.push(`bitrate=${bitrate}: bit/s, a whole number within 30000-50000000`);
    else maxBitrateBps = value;
  }
  let fps = DEFAULT_FPS;
  const fpsText = query.get('fps');
  if (fpsText !== null) {
    const value = Number(fpsText);
    if (!Number.isInteger(value) || value < 1 || value > 60) errors.push(`fps=${fpsText}: a whole number within 1-60`);
    else fps = value;
  }
  const degradationText = query.get('degradation') ?? 'maintain-framerate';
  const degradation = DEGRADATION_PREFERENCES.find((d) => d === degradationText);
  if (degradation === undefined) errors.push(`degradation=${degradationText}: one of ${DEGRADATION_PREFERENCES.join(', ')}`);
  const codecText = query.get('codec');
  const codec = codecText === null ? null : (CODECS.find((c) => c === codecText.toLowerCase()) ?? null);
  if (codecText !== null && codec === null) errors.push(`codec=${codecText}: one of ${CODECS.join(', ')}`);
  unknownParams(query, [...COMMON, ...SENDER_ONLY], warnings);
  return {
    params: { ...common, maxBitrateBps, fps, rendition: query.get('rendition'), degradation: degradation ?? 'maintain-framerate', codec },
    errors,
    warnings,
  };
}

export interface RenditionInfo {
  id: string;
  width: number;
  height: number;
  bitrate_bps: number;
}

/** `rendition` if given (null if unknown), else the highest bitrate ≤ maxBitrateBps, else the lowest. */
export function chooseRendition(renditions: readonly RenditionInfo[], wanted: string | null, maxBitrateBps: number): RenditionInfo | null {
  if (wanted !== null) return renditions.find((r) => r.id === wanted) ?? null;
  const sorted = [...renditions].sort((a, b) => a.bitrate_bps - b.bitrate_bps);
  const fitting = sorted.filter((r) => r.bitrate_bps <= maxBitrateBps);
  return fitting[fitting.length - 1] ?? sorted[0] ?? null;
}

/** Wire protocol version 1 constants (shared/PROTOCOL.md). */

export const PROTOCOL_VERSION = 1;
export const REQUEST_BYTES = 8;
export const RESPONSE_HEADER_BYTES = 24;
export const MAX_TELEMETRY_FRAME = 65536;

export const Kind = {
  MANIFEST: 1,
  INIT: 2,
  SEGMENT: 3,
  /** Live channel (shared/PROTOCOL.md "Live"): its clock and renditions (JSON). */
  LIVE_INFO: 4,
  /** Init segment of a live rendition. */
  LIVE_INIT: 5,
  /** Subscribe to the live channel from a group (or LIVE_EDGE); JSON answer. */
  SUBSCRIBE: 6,
} as const;
export type KindName = keyof typeof Kind;
export type KindCode = (typeof Kind)[KindName];

export const Status = {
  OK: 0,
  UNKNOWN_RENDITION: 1,
  UNKNOWN_SEGMENT: 2,
  MALFORMED_REQUEST: 3,
  REQUEST_TOO_LARGE: 4,
  UNSUPPORTED_VERSION: 5,
  INTERNAL_ERROR: 6,
  UNAVAILABLE: 7,
} as const;
export type StatusName = keyof typeof Status;

/** First byte of every server → client unidirectional stream. */
export const UniStreamType = {
  TELEMETRY: 1,
  /** The same frames through one raw-deflate stream (session parameter `telemetry=deflate`). */
  TELEMETRY_DEFLATE: 2,
  /** One group (GOP) of the live channel: header, then chunks as they are produced. */
  LIVE_GROUP: 3,
  /** A response the session's CONNECT asked for (`vod.first`): response header and body. */
  PUSHED_RESPONSE: 4,
} as const;

/** SUBSCRIBE's segment field for "the group being produced now". */
export const LIVE_EDGE = 0xffffffff;
/** LIVE_GROUP header after the stream-type byte: version, reserved, u16 rendition, u32 group, u64 capture µs. */
export const LIVE_GROUP_HEADER_BYTES = 16;
/** Before each chunk: u32 length, u16 first frame, u16 frame count. */
export const LIVE_CHUNK_HEADER_BYTES = 8;
/** A chunk longer than this is refused (a corrupt length would otherwise buffer without bound). */
export const MAX_LIVE_CHUNK = 16 * 1024 * 1024;
/** WebTransport application error code of a LIVE_GROUP stream the server reset: superseded. */
export const LIVE_SUPERSEDED = 1;

const KIND_NAMES = new Map<number, KindName>(
  (Object.entries(Kind) as [KindName, number][]).map(([name, code]) => [code, name]),
);
const STATUS_NAMES = new Map<number, StatusName>(
  (Object.entries(Status) as [StatusName, number][]).map(([name, code]) => [code, name]),
);

export function kindName(code: number): KindName | undefined {
  return KIND_NAMES.get(code);
}

/** The status's name, or `STATUS_<n>` for a code this client does not know. */
export function statusName(code: number): StatusName | `STATUS_${number}` {
  return STATUS_NAMES.get(code) ?? `STATUS_${code}`;
}

/** Wire protocol version 1 constants (shared/PROTOCOL.md). */

export const PROTOCOL_VERSION = 1;
export const REQUEST_BYTES = 8;
export const MAX_REQUEST_BYTES = 64;
export const RESPONSE_HEADER_BYTES = 24;
export const MAX_TELEMETRY_FRAME = 65536;

export const Kind = {
  MANIFEST: 1,
  INIT: 2,
  SEGMENT: 3,
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
} as const;

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

import { PROTOCOL_VERSION, RESPONSE_HEADER_BYTES, statusName, type StatusName } from './constants';
import { ProtocolError } from './errors';

export interface ResponseHeader {
  status: StatusName | `STATUS_${number}`;
  statusCode: number;
  /** Echo of the request's kind code (0 if the server could not parse the request). */
  kind: number;
  rendition: number;
  segment: number;
  bodyLength: number;
  /** Server clock when the response was queued, µs since the Unix epoch (u64; exact below 2^53). */
  serverTimeUs: number;
}

/** Decode the 24-byte response header at the start of `bytes` (extra bytes are ignored). */
export function decodeResponseHeader(bytes: Uint8Array): ResponseHeader {
  if (bytes.length < RESPONSE_HEADER_BYTES) {
    throw new ProtocolError(
      `response header needs ${RESPONSE_HEADER_BYTES} bytes, got ${bytes.length}`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, RESPONSE_HEADER_BYTES);
  const version = view.getUint8(0);
  if (version !== PROTOCOL_VERSION) {
    throw new ProtocolError(
      `response has protocol version ${version}, expected ${PROTOCOL_VERSION}`,
    );
  }
  const statusCode = view.getUint8(1);
  return {
    status: statusName(statusCode),
    statusCode,
    kind: view.getUint8(2),
    rendition: view.getUint16(4),
    segment: view.getUint32(8),
    bodyLength: view.getUint32(12),
    serverTimeUs: Number(view.getBigUint64(16)),
  };
}

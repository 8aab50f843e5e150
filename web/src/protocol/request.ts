import { Kind, PROTOCOL_VERSION, REQUEST_BYTES, kindName, type KindName } from './constants';
import { ProtocolError } from './errors';

export interface Request {
  kind: KindName;
  /** Index in the manifest's `renditions` (u16); 0 for MANIFEST. */
  rendition: number;
  /** 0-based segment index (u32); 0 for MANIFEST and INIT. */
  segment: number;
}

function checkUint(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`${name} must be an integer in [0, ${max}], got ${value}`);
  }
}

/** The 8-byte request: version, kind, u16 rendition, u32 segment (big-endian). */
export function encodeRequest(request: Request): Uint8Array {
  checkUint('rendition', request.rendition, 0xffff);
  checkUint('segment', request.segment, 0xffffffff);
  const bytes = new Uint8Array(REQUEST_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint8(0, PROTOCOL_VERSION);
  view.setUint8(1, Kind[request.kind]);
  view.setUint16(2, request.rendition);
  view.setUint32(4, request.segment);
  return bytes;
}

/**
 * Parse one complete request, as the server does (the player never needs this; it keeps
 * the TypeScript side checked against the same invalid-request vectors). Errors carry the
 * status the server answers with; the checks run in the server's order.
 */
export function decodeRequest(bytes: Uint8Array): Request {
  if (bytes.length > REQUEST_BYTES) {
    throw new ProtocolError(
      `request is ${bytes.length} bytes; a request is exactly ${REQUEST_BYTES} bytes`,
      'REQUEST_TOO_LARGE',
    );
  }
  if (bytes.length >= 1 && bytes[0] !== PROTOCOL_VERSION) {
    throw new ProtocolError(
      `protocol version ${bytes[0]} is not supported; this side speaks ${PROTOCOL_VERSION}`,
      'UNSUPPORTED_VERSION',
    );
  }
  if (bytes.length < REQUEST_BYTES) {
    throw new ProtocolError(
      `request is ${bytes.length} bytes; a request is exactly ${REQUEST_BYTES} bytes`,
      'MALFORMED_REQUEST',
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kindCode = view.getUint8(1);
  const kind = kindName(kindCode);
  if (kind === undefined) {
    throw new ProtocolError(`unknown request kind ${kindCode}`, 'MALFORMED_REQUEST');
  }
  return { kind, rendition: view.getUint16(2), segment: view.getUint32(4) };
}

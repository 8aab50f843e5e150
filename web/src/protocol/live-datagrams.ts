/**
 * Live over datagrams (shared/PROTOCOL.md "Live over datagrams (`live.fec=K`)"): the LIVE_DATA
 * and LIVE_PARITY fragments the server sends, the LIVE_NACK the viewer answers with, the
 * server's LIVE_GONE (a group superseded), and the per-chunk reassembly (XOR parity repair). The encoder side (`fragmentChunk`) is for tests and
 * the shared vectors; the server writes the real datagrams.
 */

import { MAX_LIVE_CHUNK } from './constants';
import { ProtocolError } from './errors';

/** The most chunk bytes one data fragment carries. */
export const LIVE_FRAGMENT_MAX = 1024;
/** Bytes before a fragment's payload. */
export const LIVE_DATAGRAM_HEADER_BYTES = 33;
/** Bytes of a LIVE_NACK before its bitmap. */
export const LIVE_NACK_HEADER_BYTES = 11;
/** Bytes of a LIVE_GONE. */
export const LIVE_GONE_BYTES = 7;

export const LiveDatagramType = {
  LIVE_DATA: 1,
  LIVE_PARITY: 2,
  LIVE_NACK: 3,
  LIVE_GONE: 4,
} as const;

/** Flags bit 0: a LIVE_DATA sent again for a NACK. */
export const LIVE_FLAG_RETRANSMISSION = 1;

/** What every fragment of one chunk repeats: which chunk it is and how it is cut. */
export interface LiveChunkInfo {
  rendition: number;
  group: number;
  /** Capture time of the group's first frame, µs since the Unix epoch (as in the group header). */
  captureUs: number;
  chunkIndex: number;
  chunksInGroup: number;
  firstFrame: number;
  frameCount: number;
  /** The chunk's length L in bytes. */
  length: number;
  /** Data fragments n = ceil(L / LIVE_FRAGMENT_MAX). */
  dataFragments: number;
  /** Parity fragments m (0 without parity). */
  parityFragments: number;
}

/** One decoded LIVE_DATA or LIVE_PARITY datagram. */
export interface LiveFragment extends LiveChunkInfo {
  kind: 'data' | 'parity';
  /** i for data (< n), p for parity (< m). */
  index: number;
  retransmission: boolean;
  payload: Uint8Array;
}

export interface LiveNack {
  rendition: number;
  group: number;
  chunkIndex: number;
  /** n as the viewer knows it, 0 if it has no fragment of the chunk (then `missing` is ignored). */
  dataFragments: number;
  /** Missing data fragment indices (each < dataFragments). */
  missing: readonly number[];
}

/** The server superseded this group: nothing more of it comes, and NACKs for it are not answered. */
export interface LiveGone {
  rendition: number;
  group: number;
}

/** n for a chunk of `length` bytes. */
export function dataFragmentCount(length: number): number {
  return Math.ceil(length / LIVE_FRAGMENT_MAX);
}

/**
 * m for n data fragments with one parity per `fec` data fragments (`fec` 0: none), at most 255
 * (the wire's u8): a huge chunk at a small `fec` gets the most parity the field carries.
 */
export function parityFragmentCount(dataFragments: number, fec: number): number {
  return fec === 0 ? 0 : Math.min(Math.ceil(dataFragments / fec), 0xff);
}

/**
 * Wire bytes per media byte of a chunk of `chunkBytes` sent with one parity per `fec` data
 * fragments: (n + m) / n, every parity being one stride long.
 */
export function wireFactor(chunkBytes: number, fec: number): number {
  const n = dataFragmentCount(Math.max(1, Math.round(chunkBytes)));
  return (n + parityFragmentCount(n, fec)) / n;
}

/** S: every data fragment's size but the last's, and every parity payload's. */
export function fragmentStride(length: number): number {
  return Math.ceil(length / dataFragmentCount(length));
}

/** Where data fragment `i` lies in a chunk of `length` bytes: [start, end). */
export function dataFragmentRange(length: number, i: number): [number, number] {
  const stride = fragmentStride(length);
  return [Math.min(i * stride, length), Math.min((i + 1) * stride, length)];
}

function u(view: DataView, at: number, size: 1 | 2 | 4): number {
  return size === 1 ? view.getUint8(at) : size === 2 ? view.getUint16(at) : view.getUint32(at);
}

/** Decode one server → client datagram; throws ProtocolError naming the first field that disagrees. */
export function decodeLiveFragment(bytes: Uint8Array): LiveFragment {
  if (bytes.length < LIVE_DATAGRAM_HEADER_BYTES) {
    throw new ProtocolError(`live datagram of ${bytes.length} bytes is shorter than its ${LIVE_DATAGRAM_HEADER_BYTES}-byte header`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, LIVE_DATAGRAM_HEADER_BYTES);
  const type = u(view, 0, 1);
  if (type !== LiveDatagramType.LIVE_DATA && type !== LiveDatagramType.LIVE_PARITY) {
    throw new ProtocolError(`live datagram has unknown type ${type} (expected 1 LIVE_DATA or 2 LIVE_PARITY)`);
  }
  const kind = type === LiveDatagramType.LIVE_DATA ? 'data' : 'parity';
  const chunkIndex = u(view, 15, 2);
  const chunksInGroup = u(view, 17, 2);
  const frameCount = u(view, 21, 2);
  const length = u(view, 23, 4);
  const index = u(view, 27, 2);
  const dataFragments = u(view, 29, 2);
  const parityFragments = u(view, 31, 1);
  const flags = u(view, 32, 1);
  const where = `live ${kind} fragment ${index} of chunk ${chunkIndex}`;
  if (chunkIndex >= chunksInGroup) {
    throw new ProtocolError(`${where}: chunk index ${chunkIndex} is not below the group's ${chunksInGroup} chunks`);
  }
  if (frameCount === 0) throw new ProtocolError(`${where}: frame count 0`);
  if (length < 1 || length > MAX_LIVE_CHUNK) {
    throw new ProtocolError(`${where}: chunk length ${length} is not in 1…${MAX_LIVE_CHUNK}`);
  }
  const expectedN = dataFragmentCount(length);
  if (dataFragments !== expectedN) {
    throw new ProtocolError(`${where}: n = ${dataFragments} data fragments, but a ${length}-byte chunk has ceil(L / ${LIVE_FRAGMENT_MAX}) = ${expectedN}`);
  }
  // m = ceil(n / K) with K ≥ 1 is never more than n.
  if (parityFragments > dataFragments) {
    throw new ProtocolError(`${where}: m = ${parityFragments} parity fragments is more than the n = ${dataFragments} data fragments`);
  }
  if (kind === 'data' && index >= dataFragments) {
    throw new ProtocolError(`${where}: data fragment index ${index} is not below n = ${dataFragments}`);
  }
  if (kind === 'parity' && index >= parityFragments) {
    throw new ProtocolError(`${where}: parity fragment index ${index} is not below m = ${parityFragments}`);
  }
  if ((flags & ~LIVE_FLAG_RETRANSMISSION) !== 0) {
    throw new ProtocolError(`${where}: reserved flag bits set (flags 0x${flags.toString(16).padStart(2, '0')}; only bit 0, retransmission, is defined)`);
  }
  // Only LIVE_DATA is retransmitted, but bit 0 on a parity fragment is not refused (nor by the
  // server's decoder): it changes nothing about the payload.
  const retransmission = (flags & LIVE_FLAG_RETRANSMISSION) !== 0;
  const [start, end] = dataFragmentRange(length, index);
  const expectedPayload = kind === 'data' ? end - start : fragmentStride(length);
  const payloadBytes = bytes.length - LIVE_DATAGRAM_HEADER_BYTES;
  if (payloadBytes !== expectedPayload) {
    throw new ProtocolError(`${where}: payload of ${payloadBytes} bytes, expected ${expectedPayload}`);
  }
  return {
    kind,
    rendition: u(view, 1, 2),
    group: u(view, 3, 4),
    captureUs: Number(view.getBigUint64(7)),
    chunkIndex,
    chunksInGroup,
    firstFrame: u(view, 19, 2),
    frameCount,
    length,
    index,
    dataFragments,
    parityFragments,
    retransmission,
    payload: bytes.subarray(LIVE_DATAGRAM_HEADER_BYTES),
  };
}

/** One fragment's datagram bytes (header and payload). */
export function encodeLiveFragment(fragment: LiveFragment): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(LIVE_DATAGRAM_HEADER_BYTES + fragment.payload.length);
  const view = new DataView(out.buffer);
  view.setUint8(0, fragment.kind === 'data' ? LiveDatagramType.LIVE_DATA : LiveDatagramType.LIVE_PARITY);
  view.setUint16(1, fragment.rendition);
  view.setUint32(3, fragment.group);
  view.setBigUint64(7, BigInt(fragment.captureUs));
  view.setUint16(15, fragment.chunkIndex);
  view.setUint16(17, fragment.chunksInGroup);
  view.setUint16(19, fragment.firstFrame);
  view.setUint16(21, fragment.frameCount);
  view.setUint32(23, fragment.length);
  view.setUint16(27, fragment.index);
  view.setUint16(29, fragment.dataFragments);
  view.setUint8(31, fragment.parityFragments);
  view.setUint8(32, fragment.retransmission ? LIVE_FLAG_RETRANSMISSION : 0);
  out.set(fragment.payload, LIVE_DATAGRAM_HEADER_BYTES);
  return out;
}

/** Where a chunk belongs, for `fragmentChunk`. */
export type LiveChunkPlace = Omit<LiveChunkInfo, 'length' | 'dataFragments' | 'parityFragments'>;

/**
 * A chunk's fragments in the server's order: the n data fragments, then the m parity
 * fragments (one per `fec` data fragments; `fec` 0: none).
 */
export function fragmentChunk(place: LiveChunkPlace, chunk: Uint8Array, fec: number): LiveFragment[] {
  if (chunk.length < 1 || chunk.length > MAX_LIVE_CHUNK) throw new RangeError(`a chunk is 1…${MAX_LIVE_CHUNK} bytes, got ${chunk.length}`);
  if (!Number.isInteger(fec) || fec < 0) throw new RangeError(`fec must be an integer ≥ 0, got ${fec}`);
  const length = chunk.length;
  const n = dataFragmentCount(length);
  const m = parityFragmentCount(n, fec);
  const stride = fragmentStride(length);
  const info: LiveChunkInfo = { ...place, length, dataFragments: n, parityFragments: m };
  const out: LiveFragment[] = [];
  const parity = Array.from({ length: m }, () => new Uint8Array(stride));
  for (let i = 0; i < n; i++) {
    const [start, end] = dataFragmentRange(length, i);
    const payload = chunk.subarray(start, end);
    out.push({ ...info, kind: 'data', index: i, retransmission: false, payload });
    if (m > 0) xorInto(parity[i % m] as Uint8Array, payload);
  }
  parity.forEach((payload, p) => out.push({ ...info, kind: 'parity', index: p, retransmission: false, payload }));
  return out;
}

/** The datagrams of `fragmentChunk`. */
export function encodeChunkDatagrams(place: LiveChunkPlace, chunk: Uint8Array, fec: number): Uint8Array<ArrayBuffer>[] {
  return fragmentChunk(place, chunk, fec).map(encodeLiveFragment);
}

function xorInto(target: Uint8Array, source: Uint8Array): void {
  for (let i = 0; i < source.length; i++) target[i] = (target[i] as number) ^ (source[i] as number);
}

/** A LIVE_NACK's bytes; `dataFragments` 0 asks for the whole chunk (no bitmap). */
export function encodeLiveNack(nack: LiveNack): Uint8Array<ArrayBuffer> {
  const n = nack.dataFragments;
  const out = new Uint8Array(LIVE_NACK_HEADER_BYTES + Math.ceil(n / 8));
  const view = new DataView(out.buffer);
  view.setUint8(0, LiveDatagramType.LIVE_NACK);
  view.setUint16(1, nack.rendition);
  view.setUint32(3, nack.group);
  view.setUint16(7, nack.chunkIndex);
  view.setUint16(9, n);
  if (n > 0) {
    for (const i of nack.missing) {
      if (!Number.isInteger(i) || i < 0 || i >= n) throw new RangeError(`missing fragment ${i} is not below n = ${n}`);
      const at = LIVE_NACK_HEADER_BYTES + (i >> 3);
      out[at] = (out[at] as number) | (1 << (i & 7));
    }
  }
  return out;
}

/** Decode a LIVE_NACK (tests and fakes; the server reads these). */
export function decodeLiveNack(bytes: Uint8Array): LiveNack {
  if (bytes.length < LIVE_NACK_HEADER_BYTES) {
    throw new ProtocolError(`LIVE_NACK of ${bytes.length} bytes is shorter than its ${LIVE_NACK_HEADER_BYTES}-byte header`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  if (view.getUint8(0) !== LiveDatagramType.LIVE_NACK) throw new ProtocolError(`LIVE_NACK has type ${view.getUint8(0)}, expected ${LiveDatagramType.LIVE_NACK}`);
  const n = view.getUint16(9);
  const bitmapBytes = Math.ceil(n / 8);
  if (bytes.length !== LIVE_NACK_HEADER_BYTES + bitmapBytes) {
    throw new ProtocolError(`LIVE_NACK with n = ${n} needs ${bitmapBytes} bitmap bytes, got ${bytes.length - LIVE_NACK_HEADER_BYTES}`);
  }
  const missing: number[] = [];
  for (let i = 0; i < 8 * bitmapBytes; i++) {
    if ((((bytes[LIVE_NACK_HEADER_BYTES + (i >> 3)] as number) >> (i & 7)) & 1) === 0) continue;
    if (i >= n) throw new ProtocolError(`LIVE_NACK bitmap has bit ${i} set, beyond its n = ${n} data fragments`);
    missing.push(i);
  }
  return { rendition: view.getUint16(1), group: view.getUint32(3), chunkIndex: view.getUint16(7), dataFragments: n, missing };
}

/** A LIVE_GONE's bytes (tests and fakes; the server sends these). */
export function encodeLiveGone(gone: LiveGone): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(LIVE_GONE_BYTES);
  const view = new DataView(out.buffer);
  view.setUint8(0, LiveDatagramType.LIVE_GONE);
  view.setUint16(1, gone.rendition);
  view.setUint32(3, gone.group);
  return out;
}

export function decodeLiveGone(bytes: Uint8Array): LiveGone {
  if (bytes.length !== LIVE_GONE_BYTES) throw new ProtocolError(`LIVE_GONE is ${bytes.length} bytes, not ${LIVE_GONE_BYTES}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  if (view.getUint8(0) !== LiveDatagramType.LIVE_GONE) throw new ProtocolError(`LIVE_GONE has type ${view.getUint8(0)}, expected ${LiveDatagramType.LIVE_GONE}`);
  return { rendition: view.getUint16(1), group: view.getUint32(3) };
}

/** What adding one fragment did. */
export interface AddResult {
  /** A data fragment that was missing arrived (or a parity fragment that was missing). */
  added: boolean;
  /** Data fragments rebuilt from parity because of it. */
  recovered: number;
}

/**
 * One chunk's fragments as they arrive: data fragments, parity, and the repair of a single
 * missing data fragment per parity class. Fragments must belong to the chunk it was made for
 * (`mismatch` says whether one does).
 */
export class LiveChunkReassembler {
  readonly info: LiveChunkInfo;
  private readonly data: (Uint8Array | null)[];
  private readonly parity: (Uint8Array | null)[];
  private missingCount: number;

  constructor(info: LiveChunkInfo) {
    this.info = { ...info };
    this.data = new Array<Uint8Array | null>(info.dataFragments).fill(null);
    this.parity = new Array<Uint8Array | null>(info.parityFragments).fill(null);
    this.missingCount = info.dataFragments;
  }

  /** Why `fragment` is not of this chunk (a field that disagrees), else null. */
  mismatch(fragment: LiveChunkInfo): string | null {
    const keys: (keyof LiveChunkInfo)[] = ['rendition', 'group', 'captureUs', 'chunkIndex', 'chunksInGroup', 'firstFrame', 'frameCount', 'length', 'dataFragments', 'parityFragments'];
    for (const key of keys) {
      if (fragment[key] !== this.info[key]) return `${key} ${fragment[key]} differs from the chunk's ${this.info[key]}`;
    }
    return null;
  }

  get complete(): boolean {
    return this.missingCount === 0;
  }

  /** Whether data fragment `i` is still missing. */
  isMissing(i: number): boolean {
    return this.data[i] === null;
  }

  /** Indices of the data fragments still missing, ascending. */
  missingData(): number[] {
    const out: number[] = [];
    this.data.forEach((d, i) => {
      if (d === null) out.push(i);
    });
    return out;
  }

  /** Add a fragment of this chunk (check `mismatch` first); rebuilds what parity now allows. */
  add(fragment: LiveFragment): AddResult {
    const m = this.info.parityFragments;
    if (fragment.kind === 'data') {
      if (this.data[fragment.index] !== null) return { added: false, recovered: 0 };
      this.data[fragment.index] = fragment.payload;
      this.missingCount -= 1;
      return { added: true, recovered: m > 0 ? this.repair(fragment.index % m) : 0 };
    }
    if (this.parity[fragment.index] !== null) return { added: false, recovered: 0 };
    this.parity[fragment.index] = fragment.payload;
    return { added: true, recovered: this.repair(fragment.index) };
  }

  /** Rebuild parity class `p`'s one missing data fragment, if it has exactly one and its parity. */
  private repair(p: number): number {
    const parity = this.parity[p];
    if (!parity) return 0;
    const m = this.info.parityFragments;
    let missing = -1;
    for (let i = p; i < this.data.length; i += m) {
      if (this.data[i] !== null) continue;
      if (missing !== -1) return 0; // two or more missing: parity cannot tell them apart
      missing = i;
    }
    if (missing === -1) return 0;
    const rebuilt = new Uint8Array(parity);
    for (let i = p; i < this.data.length; i += m) {
      const d = this.data[i];
      if (d) xorInto(rebuilt, d);
    }
    const [start, end] = dataFragmentRange(this.info.length, missing);
    this.data[missing] = rebuilt.subarray(0, end - start);
    this.missingCount -= 1;
    return 1;
  }

  /** The chunk's bytes; only once `complete`. */
  bytes(): Uint8Array<ArrayBuffer> {
    if (!this.complete) throw new Error(`chunk ${this.info.chunkIndex} of group ${this.info.group} is missing ${this.missingCount} data fragments`);
    const out = new Uint8Array(this.info.length);
    this.data.forEach((d, i) => out.set(d as Uint8Array, dataFragmentRange(this.info.length, i)[0]));
    return out;
  }
}

/**
 * The live channel's messages (shared/PROTOCOL.md "Live"): the LIVE_INFO and SUBSCRIBE JSON
 * bodies, checked on arrival, and an incremental parser for LIVE_GROUP streams.
 */

import {
  LIVE_CHUNK_HEADER_BYTES,
  LIVE_GROUP_HEADER_BYTES,
  MAX_LIVE_CHUNK,
  PROTOCOL_VERSION,
  UniStreamType,
} from './constants';
import { ByteQueue } from './byte-queue';
import { ProtocolError } from './errors';

/** A live rendition: as in the manifest, without `init` and `segments`. */
export interface LiveRendition {
  id: string;
  bitrate_bps: number;
  width: number;
  height: number;
  codec: string;
  mime: string;
}

/** LIVE_INFO body. Field names as on the wire. */
export interface LiveInfo {
  /** Server wall clock (µs since the Unix epoch) when live frame 0 was captured. */
  epoch_us: number;
  fps: number;
  fps_num: number;
  fps_den: number;
  /** F: frames per group (every group starts with a keyframe). */
  frames_per_group: number;
  group_duration_us: number;
  /** S: groups per loop of the source file. */
  loop_groups: number;
  /** S·F: the burned-in frame code counts modulo this. */
  loop_frames: number;
  /** The group being produced when the server answered. */
  live_edge_group: number;
  server_time_us: number;
  renditions: LiveRendition[];
}

/** SUBSCRIBE body. */
export interface SubscribeInfo {
  start_group: number;
  rendition: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Check = 'number' | 'positive' | 'uint' | 'posint';

function field(obj: Record<string, unknown>, key: string, where: string, check: Check): number {
  const value = obj[key];
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (check === 'number' ||
      (check === 'positive' && value > 0) ||
      (check === 'uint' && Number.isSafeInteger(value) && value >= 0) ||
      (check === 'posint' && Number.isSafeInteger(value) && value > 0));
  if (!ok) {
    const what = { number: 'a number', positive: 'a positive number', uint: 'an integer ≥ 0', posint: 'an integer > 0' }[check];
    throw new ProtocolError(`${where}.${key} must be ${what}, got ${JSON.stringify(value) ?? 'nothing'}`);
  }
  return value as number;
}

function text(obj: Record<string, unknown>, key: string, where: string): string {
  const value = obj[key];
  if (typeof value !== 'string' || value === '') {
    throw new ProtocolError(`${where}.${key} must be a non-empty string, got ${JSON.stringify(value) ?? 'nothing'}`);
  }
  return value;
}

function parseJsonBody(body: Uint8Array | string, what: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch (error) {
    throw new ProtocolError(`${what} is not UTF-8 JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!isObject(json)) throw new ProtocolError(`${what} is not a JSON object`);
  return json;
}

/**
 * Parse and check a LIVE_INFO body (bytes or text). Unknown extra fields are kept. By hand, not
 * Ajv: fps and loop_frames are checked against other fields, which a schema cannot say.
 */
export function parseLiveInfo(body: Uint8Array | string): LiveInfo {
  const where = 'LIVE_INFO';
  const json = parseJsonBody(body, where);
  field(json, 'epoch_us', where, 'uint');
  field(json, 'fps', where, 'positive');
  const num = field(json, 'fps_num', where, 'posint');
  const den = field(json, 'fps_den', where, 'posint');
  const fps = json['fps'] as number;
  if (Math.abs(fps - num / den) > 1e-3 * fps) {
    throw new ProtocolError(`${where}.fps ${fps} disagrees with fps_num/fps_den = ${num}/${den}`);
  }
  const f = field(json, 'frames_per_group', where, 'posint');
  field(json, 'group_duration_us', where, 'positive');
  const s = field(json, 'loop_groups', where, 'posint');
  const loopFrames = field(json, 'loop_frames', where, 'posint');
  if (loopFrames !== s * f) {
    throw new ProtocolError(`${where}.loop_frames ${loopFrames} is not loop_groups × frames_per_group = ${s * f}`);
  }
  field(json, 'live_edge_group', where, 'uint');
  field(json, 'server_time_us', where, 'number');
  const renditions = json['renditions'];
  if (!Array.isArray(renditions) || renditions.length === 0) {
    throw new ProtocolError(`${where}.renditions must be a non-empty array`);
  }
  renditions.forEach((r: unknown, i) => {
    const at = `${where}.renditions[${i}]`;
    if (!isObject(r)) throw new ProtocolError(`${at} is not an object`);
    text(r, 'id', at);
    text(r, 'mime', at);
    text(r, 'codec', at);
    field(r, 'bitrate_bps', at, 'positive');
    field(r, 'width', at, 'posint');
    field(r, 'height', at, 'posint');
  });
  return json as unknown as LiveInfo;
}

/** Parse and check a SUBSCRIBE body. */
export function parseSubscribe(body: Uint8Array | string): SubscribeInfo {
  const where = 'SUBSCRIBE';
  const json = parseJsonBody(body, where);
  const startGroup = field(json, 'start_group', where, 'uint');
  const rendition = field(json, 'rendition', where, 'uint');
  if (startGroup > 0xffffffff) throw new ProtocolError(`${where}.start_group ${startGroup} is not a u32`);
  if (rendition > 0xffff) throw new ProtocolError(`${where}.rendition ${rendition} is not a u16`);
  return { start_group: startGroup, rendition };
}

/** Seconds of live media time at the start of group `group` (= its first frame's capture − epoch). */
export function groupStartSeconds(info: Pick<LiveInfo, 'frames_per_group' | 'fps_num' | 'fps_den'>, group: number): number {
  return (group * info.frames_per_group * info.fps_den) / info.fps_num;
}

/** The 16 bytes after a LIVE_GROUP stream's type byte. */
export interface LiveGroupHeader {
  rendition: number;
  /** Group sequence g. */
  group: number;
  /** Capture time of the group's first frame, µs since the Unix epoch (exact below 2^53). */
  captureUs: number;
}

/** One CMAF chunk (`moof` + `mdat`) of a group. */
export interface LiveChunk {
  /** Index j in the group of the chunk's first frame. */
  firstFrame: number;
  frameCount: number;
  data: Uint8Array<ArrayBuffer>;
}

/**
 * Incremental parser of one LIVE_GROUP stream, fed the bytes after the stream-type byte in
 * pieces of any size, split anywhere: `push` returns the chunks it completed, `header` is set
 * once its 16 bytes are in, and `end()` checks that the stream stopped at a chunk boundary.
 */
export class LiveGroupParser {
  header: LiveGroupHeader | null = null;
  private readonly queue = new ByteQueue();
  private chunks = 0;

  push(bytes: Uint8Array): LiveChunk[] {
    this.queue.push(bytes);
    const out: LiveChunk[] = [];
    if (this.header === null) {
      if (this.queue.length < LIVE_GROUP_HEADER_BYTES) return out;
      this.header = decodeLiveGroupHeader(this.queue.take(LIVE_GROUP_HEADER_BYTES));
    }
    while (this.queue.length >= LIVE_CHUNK_HEADER_BYTES) {
      const head = this.queue.peek(LIVE_CHUNK_HEADER_BYTES);
      const view = new DataView(head.buffer, head.byteOffset, LIVE_CHUNK_HEADER_BYTES);
      const length = view.getUint32(0);
      if (length > MAX_LIVE_CHUNK) {
        throw new ProtocolError(`group ${this.header.group} chunk ${this.chunks}: ${length} bytes is over ${MAX_LIVE_CHUNK}`);
      }
      if (this.queue.length < LIVE_CHUNK_HEADER_BYTES + length) break;
      this.queue.take(LIVE_CHUNK_HEADER_BYTES);
      const frameCount = view.getUint16(6);
      if (frameCount === 0) throw new ProtocolError(`group ${this.header.group} chunk ${this.chunks}: frame count 0`);
      out.push({ firstFrame: view.getUint16(4), frameCount, data: this.queue.take(length) });
      this.chunks += 1;
    }
    return out;
  }

  /** Bytes of an incomplete header or chunk still waiting for the rest. */
  get pendingBytes(): number {
    return this.queue.length;
  }

  /** The stream finished (FIN): throws if it stopped inside the header or a chunk. */
  end(): void {
    if (this.header === null) {
      throw new ProtocolError(`LIVE_GROUP stream ended after ${this.queue.length} of ${LIVE_GROUP_HEADER_BYTES} header bytes`);
    }
    if (this.queue.length > 0) {
      throw new ProtocolError(`group ${this.header.group} ended inside chunk ${this.chunks} (${this.queue.length} bytes left over)`);
    }
  }
}

export function decodeLiveGroupHeader(bytes: Uint8Array): LiveGroupHeader {
  if (bytes.length < LIVE_GROUP_HEADER_BYTES) {
    throw new ProtocolError(`LIVE_GROUP header needs ${LIVE_GROUP_HEADER_BYTES} bytes, got ${bytes.length}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, LIVE_GROUP_HEADER_BYTES);
  const version = view.getUint8(0);
  if (version !== PROTOCOL_VERSION) {
    throw new ProtocolError(`LIVE_GROUP has protocol version ${version}, expected ${PROTOCOL_VERSION}`);
  }
  return {
    rendition: view.getUint16(2),
    group: view.getUint32(4),
    captureUs: Number(view.getBigUint64(8)),
  };
}

export interface ChunkBytes {
  firstFrame: number;
  frameCount: number;
  data: Uint8Array;
}

/** A LIVE_GROUP stream's header: the 16 bytes after its type byte. */
export function encodeLiveGroupHeader(header: LiveGroupHeader): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(LIVE_GROUP_HEADER_BYTES);
  const view = new DataView(out.buffer);
  view.setUint8(0, PROTOCOL_VERSION);
  view.setUint16(2, header.rendition);
  view.setUint32(4, header.group);
  view.setBigUint64(8, BigInt(header.captureUs));
  return out;
}

/** One chunk as a LIVE_GROUP stream carries it: u32 length, u16 first frame, u16 frame count, the chunk. */
export function encodeLiveChunk(chunk: ChunkBytes): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(LIVE_CHUNK_HEADER_BYTES + chunk.data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, chunk.data.length);
  view.setUint16(4, chunk.firstFrame);
  view.setUint16(6, chunk.frameCount);
  out.set(chunk.data, LIVE_CHUNK_HEADER_BYTES);
  return out;
}

/** The bytes of a LIVE_GROUP stream, type byte included (tests and fakes; the server writes these). */
export function encodeLiveGroup(header: LiveGroupHeader, chunks: readonly ChunkBytes[] = []): Uint8Array<ArrayBuffer> {
  const parts = [Uint8Array.of(UniStreamType.LIVE_GROUP), encodeLiveGroupHeader(header), ...chunks.map(encodeLiveChunk)];
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

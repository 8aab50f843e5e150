/** The media manifest (shared/schemas/manifest.schema.json), checked on arrival. */

export interface SegmentInfo {
  file: string;
  start_s: number;
  duration_s: number;
  bytes: number;
}

export interface Rendition {
  id: string;
  bitrate_bps: number;
  width: number;
  height: number;
  codec: string;
  mime: string;
  init: { file: string; bytes: number };
  segments: SegmentInfo[];
}

export interface Manifest {
  version: 1;
  source?: string;
  duration_s: number;
  segment_seconds: number;
  fps?: number;
  /** Sorted by bitrate, ascending; the index is the rendition's id on the wire. */
  renditions: Rendition[];
}

export class ManifestError extends Error {
  constructor(message: string) {
    super(`bad manifest: ${message}`);
    this.name = 'ManifestError';
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function num(obj: Record<string, unknown>, key: string, where: string, positive = false): number {
  const value = obj[key];
  if (typeof value !== 'number' || !Number.isFinite(value) || (positive && value <= 0)) {
    throw new ManifestError(`${where}.${key} must be a ${positive ? 'positive ' : ''}number`);
  }
  return value;
}

function str(obj: Record<string, unknown>, key: string, where: string): string {
  const value = obj[key];
  if (typeof value !== 'string') throw new ManifestError(`${where}.${key} must be a string`);
  return value;
}

/** Validate the fields the player relies on; return the manifest typed. */
export function parseManifest(json: unknown): Manifest {
  if (!isObject(json)) throw new ManifestError('not a JSON object');
  if (json['version'] !== 1) throw new ManifestError(`version ${String(json['version'])}, expected 1`);
  num(json, 'duration_s', 'manifest', true);
  num(json, 'segment_seconds', 'manifest', true);
  const renditions = json['renditions'];
  if (!Array.isArray(renditions) || renditions.length === 0) {
    throw new ManifestError('renditions must be a non-empty array');
  }
  let previous = 0;
  renditions.forEach((r: unknown, i) => {
    const where = `renditions[${i}]`;
    if (!isObject(r)) throw new ManifestError(`${where} is not an object`);
    str(r, 'id', where);
    str(r, 'mime', where);
    str(r, 'codec', where);
    const bitrate = num(r, 'bitrate_bps', where, true);
    if (bitrate < previous) throw new ManifestError('renditions are not sorted by bitrate');
    previous = bitrate;
    const init = r['init'];
    if (!isObject(init)) throw new ManifestError(`${where}.init is not an object`);
    const segments = r['segments'];
    if (!Array.isArray(segments) || segments.length === 0) {
      throw new ManifestError(`${where}.segments must be a non-empty array`);
    }
    segments.forEach((s: unknown, j) => {
      if (!isObject(s)) throw new ManifestError(`${where}.segments[${j}] is not an object`);
      num(s, 'start_s', `${where}.segments[${j}]`);
      num(s, 'duration_s', `${where}.segments[${j}]`, true);
    });
  });
  return json as unknown as Manifest;
}

/** Segments playable in every rendition (the shortest rendition bounds the stream). */
export function segmentCount(manifest: Manifest): number {
  return Math.min(...manifest.renditions.map((r) => r.segments.length));
}

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

function int(obj: Record<string, unknown>, key: string, where: string, minimum: number): number {
  const value = obj[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw new ManifestError(`${where}.${key} must be an integer >= ${minimum}`);
  }
  return value;
}

function fileRef(obj: Record<string, unknown>, where: string): void {
  str(obj, 'file', where);
  int(obj, 'bytes', where, 0);
}

/**
 * Check a manifest as shared/schemas/manifest.schema.json and the server's loader do (the
 * vectors in shared/vectors/manifests.json hold all three to the same verdicts); return it typed.
 * By hand, not Ajv: three rules are across fields (unique ids, ascending bitrates, equal
 * segment counts), which the schema cannot say, and Ajv would ship its compiler in the page.
 */
export function parseManifest(json: unknown): Manifest {
  if (!isObject(json)) throw new ManifestError('not a JSON object');
  if (json['version'] !== 1) throw new ManifestError(`version ${String(json['version'])}, expected 1`);
  if ('source' in json) str(json, 'source', 'manifest');
  num(json, 'duration_s', 'manifest', true);
  num(json, 'segment_seconds', 'manifest', true);
  if ('fps' in json) num(json, 'fps', 'manifest', true);
  if ('chunk_frames' in json) int(json, 'chunk_frames', 'manifest', 1);
  const renditions = json['renditions'];
  if (!Array.isArray(renditions) || renditions.length === 0) {
    throw new ManifestError('renditions must be a non-empty array');
  }
  let previous = 0;
  let segmentsPerRendition: number | null = null;
  const ids = new Set<string>();
  renditions.forEach((r: unknown, i) => {
    const where = `renditions[${i}]`;
    if (!isObject(r)) throw new ManifestError(`${where} is not an object`);
    const id = str(r, 'id', where);
    if (ids.has(id)) throw new ManifestError(`${where}.id: duplicate id '${id}'`);
    ids.add(id);
    str(r, 'mime', where);
    str(r, 'codec', where);
    int(r, 'width', where, 1);
    int(r, 'height', where, 1);
    const bitrate = int(r, 'bitrate_bps', where, 1);
    if (bitrate <= previous) {
      throw new ManifestError(`${where}.bitrate_bps: renditions must ascend by bitrate`);
    }
    previous = bitrate;
    const init = r['init'];
    if (!isObject(init)) throw new ManifestError(`${where}.init is not an object`);
    fileRef(init, `${where}.init`);
    const segments = r['segments'];
    if (!Array.isArray(segments) || segments.length === 0) {
      throw new ManifestError(`${where}.segments must be a non-empty array`);
    }
    if (segmentsPerRendition !== null && segments.length !== segmentsPerRendition) {
      throw new ManifestError(
        `${where}.segments: ${segments.length} segments, renditions[0] has ${segmentsPerRendition}`,
      );
    }
    segmentsPerRendition = segments.length;
    segments.forEach((s: unknown, j) => {
      const at = `${where}.segments[${j}]`;
      if (!isObject(s)) throw new ManifestError(`${at} is not an object`);
      fileRef(s, at);
      if (num(s, 'start_s', at) < 0) throw new ManifestError(`${at}.start_s must be >= 0`);
      num(s, 'duration_s', at, true);
    });
  });
  return json as unknown as Manifest;
}

/** Segments playable in every rendition (the shortest rendition bounds the stream). */
export function segmentCount(manifest: Manifest): number {
  return Math.min(...manifest.renditions.map((r) => r.segments.length));
}

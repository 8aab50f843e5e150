/**
 * The RFC 6381 codec string of a CMAF init segment (ftyp + moov, one video track), as the
 * server's `pccstream.media.mp4.parse_init` writes it into the manifest: with it the player
 * can create its SourceBuffer from the init segment alone, before the manifest is in.
 */

interface Box {
  type: string;
  payload: number;
  end: number;
}

function* boxes(data: Uint8Array, start: number, end: number): Generator<Box> {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let pos = start;
  while (pos + 8 <= end) {
    let size = view.getUint32(pos);
    const type = String.fromCharCode(...data.subarray(pos + 4, pos + 8));
    let header = 8;
    if (size === 1) {
      if (pos + 16 > end) return;
      size = view.getUint32(pos + 8) * 2 ** 32 + view.getUint32(pos + 12);
      header = 16;
    } else if (size === 0) {
      size = end - pos;
    }
    if (size < header || pos + size > end) return;
    yield { type, payload: pos + header, end: pos + size };
    pos += size;
  }
}

function child(data: Uint8Array, path: string[], start = 0, end = data.length): Box | null {
  let found: Box | null = null;
  for (const type of path) {
    found = null;
    for (const box of boxes(data, start, end)) {
      if (box.type === type) {
        found = box;
        break;
      }
    }
    if (found === null) return null;
    start = found.payload;
    end = found.end;
  }
  return found;
}

const CONFIG_BOX: Record<string, string> = { avc1: 'avcC', avc3: 'avcC', vp09: 'vpcC', av01: 'av1C' };
const hex2 = (n: number): string => n.toString(16).padStart(2, '0');
const dec2 = (n: number): string => String(n).padStart(2, '0');

/** The codec string, e.g. `avc1.640015`; null if `data` is not an init segment this reads. */
export function codecOfInit(data: Uint8Array): string | null {
  const stsd = child(data, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsd']);
  if (stsd === null) return null;
  const entry = boxes(data, stsd.payload + 8, stsd.end).next();
  if (entry.done) return null;
  const { type, payload, end } = entry.value;
  const configType = CONFIG_BOX[type];
  if (configType === undefined) return null;
  // A visual sample entry's child boxes start 78 bytes into its payload.
  const config = child(data, [configType], payload + 78, end);
  if (config === null) return null;
  const c = data.subarray(config.payload, config.end);
  if (type === 'avc1' || type === 'avc3') {
    if (c.length < 4) return null;
    return `${type}.${hex2(c[1] ?? 0)}${hex2(c[2] ?? 0)}${hex2(c[3] ?? 0)}`;
  }
  if (type === 'vp09') {
    if (c.length < 7) return null;
    return `vp09.${dec2(c[4] ?? 0)}.${dec2(c[5] ?? 0)}.${dec2((c[6] ?? 0) >> 4)}`;
  }
  if (c.length < 3) return null;
  const b1 = c[1] ?? 0;
  const b2 = c[2] ?? 0;
  const depth = b2 & 0x20 ? 12 : b2 & 0x40 ? 10 : 8;
  return `av01.${b1 >> 5}.${dec2(b1 & 0x1f)}${b2 & 0x80 ? 'H' : 'M'}.${dec2(depth)}`;
}

/** The MSE type of an init segment (the manifest's `mime` form), or null. */
export function mimeOfInit(data: Uint8Array): string | null {
  const codec = codecOfInit(data);
  return codec === null ? null : `video/mp4; codecs="${codec}"`;
}

/** Test helper: one TELEMETRY frame (u32 length + UTF-8 JSON). */
export function encodeFrame(record: object): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(record));
  const out = new Uint8Array(4 + json.length);
  new DataView(out.buffer).setUint32(0, json.length);
  out.set(json, 4);
  return out;
}

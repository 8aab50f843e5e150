import { describe, expect, it } from 'vitest';
import vectors from '../../../shared/vectors/protocol.json';
import {
  Kind,
  ProtocolError,
  Status,
  TelemetryDecoder,
  bytesToHex,
  decodeRequest,
  decodeResponseHeader,
  encodeRequest,
  hexToBytes,
  type KindName,
  type TelemetryRecord,
} from './index';

function isKindName(name: string): name is KindName {
  return name in Kind;
}

describe('protocol vectors (shared/vectors/protocol.json)', () => {
  it('is version 1 and non-empty', () => {
    expect(vectors.version).toBe(1);
    expect(vectors.requests.length).toBeGreaterThan(0);
    expect(vectors.invalid_requests.length).toBeGreaterThan(0);
    expect(vectors.responses.length).toBeGreaterThan(0);
    expect(vectors.telemetry_frames.length).toBeGreaterThan(0);
  });

  describe.each(vectors.requests)('request $name', (vector) => {
    it('encodes to the vector bytes and decodes back', () => {
      const { kind, rendition, segment } = vector.decoded;
      if (!isKindName(kind)) throw new Error(`vector kind ${kind}`);
      expect(bytesToHex(encodeRequest({ kind, rendition, segment }))).toBe(vector.hex);
      expect(decodeRequest(hexToBytes(vector.hex))).toEqual({ kind, rendition, segment });
    });
  });

  describe.each(vectors.invalid_requests)('invalid request $name', (vector) => {
    it(`is refused with ${vector.status}`, () => {
      expect(Status[vector.status as keyof typeof Status]).toBe(vector.status_code);
      let caught: unknown = null;
      try {
        decodeRequest(hexToBytes(vector.hex));
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ProtocolError);
      expect((caught as ProtocolError).status).toBe(vector.status);
    });
  });

  describe.each(vectors.responses)('response $name', (vector) => {
    it('decodes header and body', () => {
      const bytes = hexToBytes(vector.hex);
      const header = decodeResponseHeader(bytes);
      const d = vector.decoded;
      expect(header).toEqual({
        status: d.status,
        statusCode: d.status_code,
        kind: d.kind,
        rendition: d.rendition,
        segment: d.segment,
        bodyLength: d.body_length,
        serverTimeUs: d.server_time_us,
      });
      const body = bytes.subarray(24);
      expect(body.length).toBe(header.bodyLength);
      expect(bytesToHex(body)).toBe(d.body_hex);
    });
  });

  describe.each(vectors.telemetry_frames)('telemetry frame $name', (vector) => {
    it('decodes in one chunk', () => {
      const records = new TelemetryDecoder().push(hexToBytes(vector.hex));
      expect(records).toEqual([vector.decoded]);
    });

    it('decodes when fed one byte at a time', () => {
      const decoder = new TelemetryDecoder();
      const bytes = hexToBytes(vector.hex);
      const records: TelemetryRecord[] = [];
      for (let i = 0; i < bytes.length; i++) {
        const got = decoder.push(bytes.subarray(i, i + 1));
        if (i < bytes.length - 1) expect(got).toEqual([]);
        records.push(...got);
      }
      expect(records).toEqual([vector.decoded]);
      expect(decoder.pendingBytes).toBe(0);
    });
  });

  it('decodes all telemetry frames concatenated and split at every offset', () => {
    const all = hexToBytes(vectors.telemetry_frames.map((v) => v.hex).join(''));
    const expected = vectors.telemetry_frames.map((v) => v.decoded);
    for (let cut = 0; cut <= all.length; cut++) {
      const decoder = new TelemetryDecoder();
      const records = [...decoder.push(all.subarray(0, cut)), ...decoder.push(all.subarray(cut))];
      expect(records).toEqual(expected);
    }
  });
});

describe('protocol edge cases', () => {
  it('rejects out-of-range request fields', () => {
    expect(() => encodeRequest({ kind: 'SEGMENT', rendition: 65536, segment: 0 })).toThrow(RangeError);
    expect(() => encodeRequest({ kind: 'SEGMENT', rendition: 0, segment: -1 })).toThrow(RangeError);
    expect(() => encodeRequest({ kind: 'SEGMENT', rendition: 0, segment: 1.5 })).toThrow(RangeError);
  });

  it('rejects a short or wrong-version response header', () => {
    expect(() => decodeResponseHeader(new Uint8Array(23))).toThrow(ProtocolError);
    const bad = new Uint8Array(24);
    bad[0] = 2;
    expect(() => decodeResponseHeader(bad)).toThrow(/version 2/);
  });

  it('names unknown status codes', () => {
    const bytes = new Uint8Array(24);
    bytes[0] = 1;
    bytes[1] = 42;
    expect(decodeResponseHeader(bytes).status).toBe('STATUS_42');
  });

  it('decodes a header at a non-zero byte offset', () => {
    const vector = vectors.responses[1];
    if (!vector) throw new Error('missing vector');
    const padded = new Uint8Array(3 + vector.hex.length / 2);
    padded.set(hexToBytes(vector.hex), 3);
    expect(decodeResponseHeader(padded.subarray(3)).segment).toBe(7);
  });

  it('rejects an oversized telemetry frame and non-object records', () => {
    expect(() => new TelemetryDecoder().push(hexToBytes('00010001'))).toThrow(/over 65536/);
    const text = new TextEncoder().encode('[1]');
    const frame = new Uint8Array([0, 0, 0, text.length, ...text]);
    expect(() => new TelemetryDecoder().push(frame)).toThrow(/not a JSON object/);
  });
});

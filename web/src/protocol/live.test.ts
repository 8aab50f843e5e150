import { describe, expect, it } from 'vitest';
import vectors from '../../../shared/vectors/protocol.json';
import {
  LIVE_EDGE,
  LiveGroupParser,
  ProtocolError,
  UniStreamType,
  bytesToHex,
  encodeLiveGroup,
  encodeRequest,
  groupStartSeconds,
  hexToBytes,
  parseLiveInfo,
  parseSubscribe,
  type LiveChunk,
} from './index';

interface Decoded {
  rendition: number;
  group: number;
  capture_us: number;
  chunks: { first_frame: number; frame_count: number; hex: string }[];
}

function expected(d: Decoded): { header: object; chunks: object[] } {
  return {
    header: { rendition: d.rendition, group: d.group, captureUs: d.capture_us },
    chunks: d.chunks.map((c) => ({ firstFrame: c.first_frame, frameCount: c.frame_count, data: c.hex })),
  };
}

function parseAll(bytes: Uint8Array, cuts: number[]): { header: object | null; chunks: object[]; parser: LiveGroupParser } {
  const parser = new LiveGroupParser();
  const chunks: LiveChunk[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    chunks.push(...parser.push(bytes.subarray(at, cut)));
    at = cut;
  }
  parser.end();
  return { header: parser.header, parser, chunks: chunks.map((c) => ({ ...c, data: bytesToHex(c.data) })) };
}

describe('LIVE_GROUP vectors (shared/vectors/protocol.json)', () => {
  it('has live groups and invalid ones', () => {
    expect(vectors.live_groups.length).toBeGreaterThan(0);
    expect(vectors.invalid_live_groups.length).toBeGreaterThan(0);
  });

  describe.each(vectors.live_groups)('live group $name', (vector) => {
    const all = hexToBytes(vector.hex);
    const body = all.subarray(1);

    it('starts with the LIVE_GROUP type byte and re-encodes to the same bytes', () => {
      expect(all[0]).toBe(UniStreamType.LIVE_GROUP);
      expect(vector.decoded.stream_type).toBe(3);
      const d = vector.decoded;
      const chunks = d.chunks.map((c) => ({ firstFrame: c.first_frame, frameCount: c.frame_count, data: hexToBytes(c.hex) }));
      expect(bytesToHex(encodeLiveGroup({ rendition: d.rendition, group: d.group, captureUs: d.capture_us }, chunks))).toBe(vector.hex);
    });

    it('parses in one piece', () => {
      const got = parseAll(body, []);
      expect({ header: got.header, chunks: got.chunks }).toEqual(expected(vector.decoded));
    });

    it('parses one byte at a time, yielding each chunk as its last byte arrives', () => {
      const parser = new LiveGroupParser();
      const chunks: LiveChunk[] = [];
      for (let i = 0; i < body.length; i++) {
        const got = parser.push(body.subarray(i, i + 1));
        if (got.length > 0) expect(parser.pendingBytes).toBe(0);
        chunks.push(...got);
        if (i < 15) expect(parser.header).toBeNull();
      }
      parser.end();
      expect(chunks.map((c) => ({ ...c, data: bytesToHex(c.data) }))).toEqual(expected(vector.decoded).chunks);
    });

    it('parses split at every pair of offsets', () => {
      const want = expected(vector.decoded);
      for (let a = 0; a <= body.length; a++) {
        for (let b = a; b <= body.length; b += 3) {
          const got = parseAll(body, [a, b]);
          expect({ header: got.header, chunks: got.chunks }).toEqual(want);
        }
      }
    });
  });

  describe.each(vectors.invalid_live_groups)('invalid live group $name', (vector) => {
    it(`is refused (${vector.error})`, () => {
      const body = hexToBytes(vector.hex).subarray(1);
      const parser = new LiveGroupParser();
      expect(() => {
        parser.push(body);
        parser.end();
      }).toThrow(ProtocolError);
      const byByte = new LiveGroupParser();
      expect(() => {
        for (let i = 0; i < body.length; i++) byByte.push(body.subarray(i, i + 1));
        byByte.end();
      }).toThrow(new RegExp(vector.error));
    });
  });

  it('does not keep a reference to the pushed buffer (readers reuse theirs)', () => {
    const v = vectors.live_groups[0];
    if (!v) throw new Error('no vector');
    const body = hexToBytes(v.hex).subarray(1);
    const parser = new LiveGroupParser();
    const scratch = new Uint8Array(body.length);
    scratch.set(body.subarray(0, 20));
    parser.push(scratch.subarray(0, 20));
    scratch.fill(0xee);
    const chunks = parser.push(body.subarray(20));
    expect(chunks.map((c) => bytesToHex(c.data))).toEqual(v.decoded.chunks.map((c) => c.hex));
  });

  it('refuses an absurd chunk length without waiting for it', () => {
    const bytes = encodeLiveGroup({ rendition: 0, group: 1, captureUs: 0 }).subarray(1);
    const parser = new LiveGroupParser();
    parser.push(bytes);
    expect(() => parser.push(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1]))).toThrow(/over/);
  });

  it('refuses a chunk of zero frames', () => {
    const bytes = encodeLiveGroup({ rendition: 0, group: 1, captureUs: 0 }, [{ firstFrame: 0, frameCount: 0, data: new Uint8Array(3) }]);
    expect(() => new LiveGroupParser().push(bytes.subarray(1))).toThrow(/frame count 0/);
  });
});

describe('live requests', () => {
  it('SUBSCRIBE at the live edge uses 0xFFFFFFFF', () => {
    expect(bytesToHex(encodeRequest({ kind: 'SUBSCRIBE', rendition: 2, segment: LIVE_EDGE }))).toBe('01060002ffffffff');
  });
});

const INFO = {
  epoch_us: 1_700_000_000_000_000,
  fps: 30,
  fps_num: 30,
  fps_den: 1,
  frames_per_group: 15,
  group_duration_us: 500_000,
  loop_groups: 60,
  loop_frames: 900,
  live_edge_group: 10,
  server_time_us: 1_700_000_005_100_000,
  renditions: [{ id: '1500k', bitrate_bps: 1_500_000, width: 854, height: 480, codec: 'avc1.64001f', mime: 'video/mp4; codecs="avc1.64001f"' }],
};

describe('parseLiveInfo', () => {
  it('accepts the vector body and a well-formed object', () => {
    const v = vectors.responses.find((r) => r.name === 'live info ok');
    if (!v) throw new Error('no live info vector');
    const info = parseLiveInfo(hexToBytes(v.decoded.body_hex));
    expect(info.frames_per_group).toBe(15);
    expect(info.renditions[0]?.id).toBe('1500k');
    expect(parseLiveInfo(JSON.stringify(INFO))).toEqual(INFO);
  });

  it.each([
    [{ ...INFO, fps: 0 }, /LIVE_INFO.fps must be a positive number/],
    [{ ...INFO, fps: 25 }, /disagrees with fps_num\/fps_den = 30\/1/],
    [{ ...INFO, frames_per_group: 1.5 }, /frames_per_group must be an integer > 0/],
    [{ ...INFO, loop_frames: 901 }, /loop_frames 901 is not loop_groups × frames_per_group = 900/],
    [{ ...INFO, live_edge_group: -1 }, /live_edge_group must be an integer ≥ 0/],
    [{ ...INFO, epoch_us: undefined }, /epoch_us must be an integer ≥ 0, got nothing/],
    [{ ...INFO, renditions: [] }, /renditions must be a non-empty array/],
    [{ ...INFO, renditions: [{ ...INFO.renditions[0], mime: '' }] }, /renditions\[0\].mime must be a non-empty string/],
    [[1], /not a JSON object/],
  ])('refuses %j', (body, error) => {
    expect(() => parseLiveInfo(JSON.stringify(body))).toThrow(error);
  });

  it('refuses a body that is not JSON', () => {
    expect(() => parseLiveInfo(new Uint8Array([0x7b, 0xff]))).toThrow(/LIVE_INFO is not UTF-8 JSON/);
  });

  it('group start times are exact multiples of the group duration', () => {
    expect(groupStartSeconds(INFO, 10)).toBe(5);
    expect(groupStartSeconds({ frames_per_group: 15, fps_num: 30000, fps_den: 1001 }, 2)).toBeCloseTo(1.001, 12);
  });
});

describe('parseSubscribe', () => {
  it('accepts the vector body', () => {
    const v = vectors.responses.find((r) => r.name === 'subscribe ok');
    if (!v) throw new Error('no subscribe vector');
    expect(parseSubscribe(hexToBytes(v.decoded.body_hex))).toEqual({ start_group: 1234, rendition: 2 });
  });
  it('refuses bad fields', () => {
    expect(() => parseSubscribe('{"start_group":"1","rendition":0}')).toThrow(/SUBSCRIBE.start_group must be an integer ≥ 0, got "1"/);
    expect(() => parseSubscribe('{"start_group":1,"rendition":70000}')).toThrow(/not a u16/);
    expect(() => parseSubscribe('null')).toThrow(/not a JSON object/);
  });
});

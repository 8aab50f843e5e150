import { describe, expect, it } from 'vitest';
import vectors from '../../../shared/vectors/live-datagrams.json';
import {
  LIVE_DATAGRAM_HEADER_BYTES,
  LIVE_FRAGMENT_MAX,
  LiveChunkReassembler,
  LiveDatagramType,
  ProtocolError,
  bytesToHex,
  decodeLiveFragment,
  decodeLiveGone,
  decodeLiveNack,
  encodeChunkDatagrams,
  encodeLiveFragment,
  encodeLiveGone,
  encodeLiveNack,
  hexToBytes,
  type LiveFragment,
} from './index';

type ChunkVector = (typeof vectors.chunks)[number];

function placeOf(v: ChunkVector): Parameters<typeof encodeChunkDatagrams>[0] {
  return { rendition: v.rendition, group: v.group, captureUs: v.capture_us, chunkIndex: v.chunk_index, chunksInGroup: v.chunks_in_group, firstFrame: v.first_frame, frameCount: v.frames };
}

function chunkNamed(name: string): ChunkVector {
  const found = vectors.chunks.find((c) => c.name === name);
  if (!found) throw new Error(`no chunk vector named ${JSON.stringify(name)}`);
  return found;
}

/** Feed decoded fragments to a reassembler made from the first; returns it and the repairs. */
function reassemble(fragments: LiveFragment[]): { chunk: LiveChunkReassembler; recovered: number } {
  const first = fragments[0];
  if (!first) throw new Error('no fragments');
  const chunk = new LiveChunkReassembler(first);
  let recovered = 0;
  for (const fragment of fragments) {
    expect(chunk.mismatch(fragment)).toBeNull();
    recovered += chunk.add(fragment).recovered;
  }
  return { chunk, recovered };
}

describe('live datagram vectors (shared/vectors/live-datagrams.json)', () => {
  it('agree with the constants', () => {
    expect(vectors.fragment_max).toBe(LIVE_FRAGMENT_MAX);
    expect(vectors.header_bytes).toBe(LIVE_DATAGRAM_HEADER_BYTES);
    expect(vectors.types).toEqual(LiveDatagramType);
    for (const key of ['chunks', 'recoveries', 'nacks', 'invalid_datagrams', 'gones', 'invalid_gones'] as const) expect(vectors[key].length).toBeGreaterThan(0);
  });

  describe.each(vectors.chunks)('chunk $name', (vector) => {
    const chunk = hexToBytes(vector.chunk_hex);

    it('fragments to exactly the datagrams', () => {
      expect(encodeChunkDatagrams(placeOf(vector), chunk, vector.k).map(bytesToHex)).toEqual(vector.datagrams_hex);
    });

    it('decodes, re-encodes, and reassembles to the chunk', () => {
      const fragments = vector.datagrams_hex.map((hex) => decodeLiveFragment(hexToBytes(hex)));
      fragments.forEach((f, i) => {
        expect(bytesToHex(encodeLiveFragment(f))).toBe(vector.datagrams_hex[i]);
        const { rendition, group, captureUs, chunkIndex, chunksInGroup, firstFrame, frameCount, length, retransmission } = f;
        expect({ rendition, group, captureUs, chunkIndex, chunksInGroup, firstFrame, frameCount, length, retransmission }).toEqual({ ...placeOf(vector), length: chunk.length, retransmission: false });
      });
      const { chunk: got, recovered } = reassemble(fragments);
      expect(recovered).toBe(0);
      expect(got.complete).toBe(true);
      expect(got.missingData()).toEqual([]);
      expect(bytesToHex(got.bytes())).toBe(vector.chunk_hex);
    });
  });

  describe.each(vectors.retransmissions)('retransmission $name', (vector) => {
    it('decodes with the retransmission flag and re-encodes', () => {
      const fragment = decodeLiveFragment(hexToBytes(vector.hex));
      expect(fragment.retransmission).toBe(true);
      expect(fragment.kind).toBe('data');
      expect(fragment.index).toBe(vector.index);
      expect(bytesToHex(encodeLiveFragment(fragment))).toBe(vector.hex);
      const original = chunkNamed(vector.chunk).datagrams_hex[vector.index] as string;
      expect(bytesToHex(fragment.payload)).toBe(original.slice(2 * LIVE_DATAGRAM_HEADER_BYTES));
    });
  });

  describe.each(vectors.recoveries)('recovery $name', (vector) => {
    it(vector.recoverable ? 'rebuilds the chunk from parity' : 'lists the data fragments still missing', () => {
      const source = chunkNamed(vector.chunk);
      const kept = source.datagrams_hex.filter((_, i) => !vector.drop.includes(i)).map((hex) => decodeLiveFragment(hexToBytes(hex)));
      const { chunk, recovered } = reassemble(kept);
      expect(chunk.complete).toBe(vector.recoverable);
      expect(chunk.missingData()).toEqual(vector.missing_data);
      const droppedData = vector.drop.filter((i) => decodeLiveFragment(hexToBytes(source.datagrams_hex[i] as string)).kind === 'data').length;
      expect(recovered).toBe(droppedData - vector.missing_data.length);
      if (vector.recoverable) expect(bytesToHex(chunk.bytes())).toBe(source.chunk_hex);
      else expect(() => chunk.bytes()).toThrow(/missing/);
    });
  });

  describe.each(vectors.nacks)('nack $name', (vector) => {
    const nack = { rendition: vector.rendition, group: vector.group, chunkIndex: vector.chunk_index, dataFragments: vector.n, missing: vector.missing };

    it('encodes to the hex', () => {
      expect(bytesToHex(encodeLiveNack(nack))).toBe(vector.hex);
    });

    it('decodes from the hex', () => {
      expect(decodeLiveNack(hexToBytes(vector.hex))).toEqual(nack);
    });
  });

  describe.each(vectors.invalid_datagrams)('invalid datagram $name', (vector) => {
    it(`is refused: ${vector.error_contains}`, () => {
      const decode = (): unknown => decodeLiveFragment(hexToBytes(vector.hex));
      expect(decode).toThrow(ProtocolError);
      expect(decode).toThrow(vector.error_contains);
    });
  });

  describe.each(vectors.invalid_nacks)('invalid nack $name', (vector) => {
    it(`is refused: ${vector.error_contains}`, () => {
      const decode = (): unknown => decodeLiveNack(hexToBytes(vector.hex));
      expect(decode).toThrow(ProtocolError);
      expect(decode).toThrow(vector.error_contains);
    });
  });

  describe.each(vectors.gones)('gone $name', (vector) => {
    it('encodes to the hex and decodes back', () => {
      const gone = { rendition: vector.rendition, group: vector.group };
      expect(bytesToHex(encodeLiveGone(gone))).toBe(vector.hex);
      expect(decodeLiveGone(hexToBytes(vector.hex))).toEqual(gone);
    });
  });

  describe.each(vectors.invalid_gones)('invalid gone $name', (vector) => {
    it(`is refused: ${vector.error_contains}`, () => {
      const decode = (): unknown => decodeLiveGone(hexToBytes(vector.hex));
      expect(decode).toThrow(ProtocolError);
      expect(decode).toThrow(vector.error_contains);
    });
  });
});

describe('LiveChunkReassembler', () => {
  const place = { rendition: 0, group: 1, captureUs: 5, chunkIndex: 0, chunksInGroup: 1, firstFrame: 0, frameCount: 1 };

  it('refuses a fragment of another chunk', () => {
    const [a] = encodeChunkDatagrams(place, new Uint8Array(10), 1).map(decodeLiveFragment);
    const [b] = encodeChunkDatagrams({ ...place, chunkIndex: 1, chunksInGroup: 2 }, new Uint8Array(10), 1).map(decodeLiveFragment);
    const chunk = new LiveChunkReassembler(a as LiveFragment);
    expect(chunk.mismatch(b as LiveFragment)).toMatch(/chunkIndex 1/);
  });

  it('counts a duplicate fragment once', () => {
    const fragments = encodeChunkDatagrams(place, Uint8Array.from({ length: 3000 }, (_, i) => i & 0xff), 0).map(decodeLiveFragment);
    const chunk = new LiveChunkReassembler(fragments[0] as LiveFragment);
    expect(chunk.add(fragments[1] as LiveFragment).added).toBe(true);
    expect(chunk.add(fragments[1] as LiveFragment).added).toBe(false);
    expect(chunk.missingData()).toEqual([0, 2]);
    expect(chunk.isMissing(1)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import vectors from '../../../shared/vectors/cmaf-chunks.json';
import { bytesToHex, hexToBytes } from '../protocol';
import { CmafChunkParser } from './chunks';

/** Feed `stream` in pieces cut at `cuts` (sorted offsets); all chunks, the last piece included. */
function parse(stream: Uint8Array, cuts: number[]): string[] {
  const parser = new CmafChunkParser();
  const out: string[] = [];
  let from = 0;
  for (const cut of [...cuts, stream.length]) {
    for (const chunk of parser.push(stream.subarray(from, cut))) out.push(bytesToHex(chunk));
    from = cut;
  }
  const last = parser.end();
  if (last !== null) out.push(bytesToHex(last));
  return out;
}

/** Deterministic pseudo-random cut points (a small LCG; no Math.random in tests). */
function randomCuts(length: number, count: number, seed: number): number[] {
  let state = seed;
  const cuts = new Set<number>();
  for (let i = 0; i < count; i++) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    cuts.add(1 + (state % Math.max(1, length - 1)));
  }
  return [...cuts].sort((a, b) => a - b);
}

describe('CMAF chunk parser (shared/vectors/cmaf-chunks.json)', () => {
  for (const v of vectors.chunks) {
    const stream = hexToBytes(v.stream);
    it(`${v.name}: whole`, () => {
      expect(parse(stream, [])).toEqual(v.chunks);
    });
    it(`${v.name}: split at every single point`, () => {
      for (let cut = 1; cut < stream.length; cut++) expect(parse(stream, [cut])).toEqual(v.chunks);
    });
    it(`${v.name}: one byte at a time`, () => {
      expect(parse(stream, Array.from({ length: stream.length - 1 }, (_, i) => i + 1))).toEqual(v.chunks);
    });
    it(`${v.name}: split at many random points`, () => {
      for (let seed = 1; seed <= 50; seed++) expect(parse(stream, randomCuts(stream.length, 1 + (seed % 7), seed))).toEqual(v.chunks);
    });
  }

  for (const v of vectors.errors) {
    it(`${v.name}: an error naming the problem`, () => {
      const stream = hexToBytes(v.stream);
      expect(() => parse(stream, [])).toThrow(v.error);
      for (let cut = 1; cut < stream.length; cut++) expect(() => parse(stream, [cut])).toThrow(v.error);
    });
  }

  it('a chunk is returned as soon as its mdat is complete, before the next bytes', () => {
    const v = vectors.chunks[0];
    if (!v) throw new Error('no vector');
    const stream = hexToBytes(v.stream);
    const firstLength = hexToBytes(v.chunks[0] ?? '').length;
    const parser = new CmafChunkParser();
    expect(parser.push(stream.subarray(0, firstLength - 1))).toEqual([]);
    expect(parser.push(stream.subarray(firstLength - 1, firstLength)).map(bytesToHex)).toEqual([v.chunks[0]]);
  });
});

import { describe, expect, it } from 'vitest';
import vectors from '../../../shared/vectors/cmaf-chunks.json';
import { hexToBytes } from '../protocol';
import { codecOfInit, mimeOfInit } from './codec';

describe('codec string of an init segment (shared/vectors/cmaf-chunks.json)', () => {
  for (const v of vectors.init_codecs) {
    it(v.name, () => {
      const init = hexToBytes(v.init);
      expect(codecOfInit(init)).toBe(v.codec);
      expect(mimeOfInit(init)).toBe(`video/mp4; codecs="${v.codec}"`);
    });
  }

  it('null for what is not an init segment', () => {
    expect(codecOfInit(new Uint8Array(0))).toBeNull();
    expect(codecOfInit(new Uint8Array(100).fill(0xff))).toBeNull();
    const v = vectors.init_codecs[0];
    if (!v) throw new Error('no vector');
    expect(codecOfInit(hexToBytes(v.init).subarray(0, 200))).toBeNull();
  });
});

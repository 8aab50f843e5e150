import { describe, expect, it } from 'vitest';
import { ManifestError, parseManifest, segmentCount } from './manifest';
import { describeLadder, selectFixedRendition } from './rendition';

const ladder = [{ bitrate_bps: 300_000 }, { bitrate_bps: 750_000 }, { bitrate_bps: 1_500_000 }, { bitrate_bps: 3_000_000 }];

describe('selectFixedRendition', () => {
  it('picks the exact bitrate', () => {
    expect(selectFixedRendition(ladder, 750)).toBe(1);
    expect(selectFixedRendition(ladder, 3000)).toBe(3);
  });
  it('else the highest not above it', () => {
    expect(selectFixedRendition(ladder, 1499)).toBe(1);
    expect(selectFixedRendition(ladder, 2000)).toBe(2);
    expect(selectFixedRendition(ladder, 1e9)).toBe(3);
  });
  it('is null when every rendition is above it', () => {
    expect(selectFixedRendition(ladder, 299)).toBeNull();
  });
  it('does not depend on ladder order', () => {
    expect(selectFixedRendition([...ladder].reverse(), 2000)).toBe(1);
  });
  it('describes the ladder', () => {
    expect(describeLadder([{ id: '300k', bitrate_bps: 300_000 }])).toBe('300k (300 kbit/s)');
  });
});

function rendition(id: string, bitrate: number, segments = 3): unknown {
  return {
    id,
    bitrate_bps: bitrate,
    width: 640,
    height: 360,
    codec: 'avc1.64001f',
    mime: 'video/mp4; codecs="avc1.64001f"',
    init: { file: `${id}/init.mp4`, bytes: 800 },
    segments: Array.from({ length: segments }, (_, i) => ({
      file: `${id}/seg-${i}.m4s`,
      start_s: 2 * i,
      duration_s: 2,
      bytes: 1000,
    })),
  };
}

describe('parseManifest', () => {
  const good = { version: 1, duration_s: 6, segment_seconds: 2, renditions: [rendition('a', 1e5), rendition('b', 2e5)] };

  it('accepts a valid manifest and counts playable segments', () => {
    const m = parseManifest(good);
    expect(m.renditions.length).toBe(2);
    expect(segmentCount(m)).toBe(3);
  });

  it.each([
    [null, /JSON object/],
    [{ ...good, version: 2 }, /version/],
    [{ ...good, renditions: [] }, /non-empty/],
    [{ ...good, duration_s: 0 }, /duration_s/],
    [{ ...good, renditions: [rendition('b', 2e5), rendition('a', 1e5)] }, /ascend by bitrate/],
    [{ ...good, renditions: [rendition('a', 1e5), rendition('b', 2e5, 2)] }, /renditions\[0\] has 3/],
    [{ ...good, renditions: [{ ...(rendition('a', 1e5) as object), mime: 3 }] }, /mime/],
    [{ ...good, renditions: [{ ...(rendition('a', 1e5) as object), segments: [] }] }, /segments/],
  ])('rejects %#', (json, message) => {
    expect(() => parseManifest(json)).toThrow(ManifestError);
    expect(() => parseManifest(json)).toThrow(message);
  });
});

import type { Rendition } from './manifest';

/**
 * mode=fixed: the rendition whose `bitrate_bps / 1000` equals `kbps`, else the highest whose
 * bitrate is not above it; `null` if every rendition is above it. Renditions may be given in
 * any order; the returned value is an index into `renditions`.
 */
export function selectFixedRendition(
  renditions: readonly Pick<Rendition, 'bitrate_bps'>[],
  kbps: number,
): number | null {
  const exact = renditions.findIndex((r) => r.bitrate_bps / 1000 === kbps);
  if (exact >= 0) return exact;
  let best: number | null = null;
  renditions.forEach((r, i) => {
    if (r.bitrate_bps <= kbps * 1000) {
      const current = best === null ? undefined : renditions[best];
      if (current === undefined || r.bitrate_bps > current.bitrate_bps) best = i;
    }
  });
  return best;
}

export function describeLadder(renditions: readonly Pick<Rendition, 'id' | 'bitrate_bps'>[]): string {
  return renditions.map((r) => `${r.id} (${Math.round(r.bitrate_bps / 1000)} kbit/s)`).join(', ');
}

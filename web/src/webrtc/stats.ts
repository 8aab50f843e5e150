/**
 * Pure parsing of `RTCPeerConnection.getStats()` reports (W3C webrtc-stats names) into the
 * WebRTC arm's metrics. The pages pass `[...report.values()]`; tests pass plain objects.
 */

export type StatsEntry = Record<string, unknown>;

function num(entry: StatsEntry | undefined, key: string): number | null {
  const value = entry?.[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function str(entry: StatsEntry | undefined, key: string): string | null {
  const value = entry?.[key];
  return typeof value === 'string' ? value : null;
}

function videoEntry(entries: readonly StatsEntry[], type: string): StatsEntry | undefined {
  return entries.find((e) => e['type'] === type && (e['kind'] ?? e['mediaType']) === 'video');
}

function codecOf(entries: readonly StatsEntry[], rtp: StatsEntry | undefined): string | null {
  const id = str(rtp, 'codecId');
  if (id === null) return null;
  return str(
    entries.find((e) => e['id'] === id),
    'mimeType',
  );
}

/** The selected candidate pair: the transport's, else the nominated succeeded one. */
function selectedPair(entries: readonly StatsEntry[]): StatsEntry | undefined {
  const transport = entries.find((e) => e['type'] === 'transport' && typeof e['selectedCandidatePairId'] === 'string');
  return (
    entries.find((e) => e['type'] === 'candidate-pair' && e['id'] === transport?.['selectedCandidatePairId']) ??
    entries.find((e) => e['type'] === 'candidate-pair' && e['nominated'] === true && e['state'] === 'succeeded')
  );
}

/** RTT of the selected candidate pair, ms. */
export function selectedPairRttMs(entries: readonly StatsEntry[]): number | null {
  const rtt = num(selectedPair(entries), 'currentRoundTripTime');
  return rtt === null ? null : rtt * 1000;
}

/** The receiver's cumulative counters from one report (inbound-rtp video). */
export interface InboundSample {
  framesDecoded: number;
  framesDropped: number;
  framesReceived: number;
  framesPerSecond: number | null;
  frameWidth: number | null;
  frameHeight: number | null;
  freezeCount: number;
  totalFreezesDurationS: number;
  jitterBufferDelayS: number;
  jitterBufferEmittedCount: number;
  bytesReceived: number;
  packetsReceived: number;
  packetsLost: number;
  nackCount: number;
  pliCount: number;
  codec: string | null;
  roundTripTimeMs: number | null;
}

export function parseInbound(entries: readonly StatsEntry[]): InboundSample | null {
  const rtp = videoEntry(entries, 'inbound-rtp');
  if (rtp === undefined) return null;
  return {
    framesDecoded: num(rtp, 'framesDecoded') ?? 0,
    framesDropped: num(rtp, 'framesDropped') ?? 0,
    framesReceived: num(rtp, 'framesReceived') ?? 0,
    framesPerSecond: num(rtp, 'framesPerSecond'),
    frameWidth: num(rtp, 'frameWidth'),
    frameHeight: num(rtp, 'frameHeight'),
    freezeCount: num(rtp, 'freezeCount') ?? 0,
    totalFreezesDurationS: num(rtp, 'totalFreezesDuration') ?? 0,
    jitterBufferDelayS: num(rtp, 'jitterBufferDelay') ?? 0,
    jitterBufferEmittedCount: num(rtp, 'jitterBufferEmittedCount') ?? 0,
    bytesReceived: num(rtp, 'bytesReceived') ?? 0,
    packetsReceived: num(rtp, 'packetsReceived') ?? 0,
    packetsLost: num(rtp, 'packetsLost') ?? 0,
    nackCount: num(rtp, 'nackCount') ?? 0,
    pliCount: num(rtp, 'pliCount') ?? 0,
    codec: codecOf(entries, rtp),
    roundTripTimeMs: selectedPairRttMs(entries),
  };
}

/** The sender's counters from one report (outbound-rtp video and its remote-inbound-rtp). */
export interface OutboundSample {
  targetBitrateBps: number | null;
  bytesSent: number;
  framesEncoded: number;
  framesSent: number;
  framesPerSecond: number | null;
  frameWidth: number | null;
  frameHeight: number | null;
  qualityLimitationReason: string | null;
  qualityLimitationDurations: Record<string, number> | null;
  encoderImplementation: string | null;
  nackCount: number;
  pliCount: number;
  retransmittedBytesSent: number;
  codec: string | null;
  /** From the receiver's RTCP reports. */
  remoteRoundTripTimeMs: number | null;
  remoteFractionLost: number | null;
  roundTripTimeMs: number | null;
  /** The selected pair's availableOutgoingBitrate: the congestion controller's (GCC's) estimate. */
  availableOutgoingBitrateBps: number | null;
}

export function parseOutbound(entries: readonly StatsEntry[]): OutboundSample | null {
  const rtp = videoEntry(entries, 'outbound-rtp');
  if (rtp === undefined) return null;
  const remote = entries.find((e) => e['type'] === 'remote-inbound-rtp' && e['localId'] === rtp['id']);
  const durations = rtp['qualityLimitationDurations'];
  const rtt = num(remote, 'roundTripTime');
  return {
    targetBitrateBps: num(rtp, 'targetBitrate'),
    bytesSent: num(rtp, 'bytesSent') ?? 0,
    framesEncoded: num(rtp, 'framesEncoded') ?? 0,
    framesSent: num(rtp, 'framesSent') ?? 0,
    framesPerSecond: num(rtp, 'framesPerSecond'),
    frameWidth: num(rtp, 'frameWidth'),
    frameHeight: num(rtp, 'frameHeight'),
    qualityLimitationReason: str(rtp, 'qualityLimitationReason'),
    qualityLimitationDurations: typeof durations === 'object' && durations !== null ? (durations as Record<string, number>) : null,
    encoderImplementation: str(rtp, 'encoderImplementation'),
    nackCount: num(rtp, 'nackCount') ?? 0,
    pliCount: num(rtp, 'pliCount') ?? 0,
    retransmittedBytesSent: num(rtp, 'retransmittedBytesSent') ?? 0,
    codec: codecOf(entries, rtp),
    remoteRoundTripTimeMs: rtt === null ? null : rtt * 1000,
    remoteFractionLost: num(remote, 'fractionLost'),
    roundTripTimeMs: selectedPairRttMs(entries),
    availableOutgoingBitrateBps: num(selectedPair(entries), 'availableOutgoingBitrate'),
  };
}

/** Bit rate of a growing byte counter over the last `windowMs`. */
export class RateWindow {
  private points: { t: number; bytes: number }[] = [];

  constructor(private readonly windowMs = 2000) {}

  add(tMs: number, bytes: number): void {
    this.points.push({ t: tMs, bytes });
    // Keep one point at or before the window's start, so the rate spans the whole window.
    while (this.points.length > 2 && this.points[1]!.t <= tMs - this.windowMs) this.points.shift();
  }

  rateBps(): number | null {
    const first = this.points[0];
    const last = this.points[this.points.length - 1];
    if (first === undefined || last === undefined || last.t <= first.t) return null;
    return ((last.bytes - first.bytes) * 8 * 1000) / (last.t - first.t);
  }
}

/** Freeze ratio: freeze time / play time (the WebRTC analogue of the buffering ratio). */
export function freezeRatio(totalFreezesDurationS: number, playSeconds: number): number {
  return playSeconds > 0 ? Math.min(1, totalFreezesDurationS / playSeconds) : 0;
}

/** Mean time a frame waited in the jitter buffer, ms (null before any frame left it). */
export function jitterBufferDelayMs(sample: Pick<InboundSample, 'jitterBufferDelayS' | 'jitterBufferEmittedCount'>): number | null {
  return sample.jitterBufferEmittedCount > 0 ? (sample.jitterBufferDelayS / sample.jitterBufferEmittedCount) * 1000 : null;
}

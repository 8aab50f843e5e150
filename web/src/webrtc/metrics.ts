/**
 * `window.pccstream.metrics()` of the WebRTC pages (definitions in web/README.md, "WebRTC
 * arm"). Built by pure functions from the latest getStats sample and the page's clocks.
 */

import type { LatencySnapshot } from '../latency/latency';
import { percentile } from '../latency/percentile';
import type { EventLoopLagSnapshot } from '../metrics/event-loop-lag';
import { freezeRatio, jitterBufferDelayMs, type InboundSample, type OutboundSample } from './stats';

export type CallState = 'loading' | 'waiting-offer' | 'waiting-answer' | 'connecting' | 'playing' | 'sending' | 'failed' | 'closed';

export interface ReceiverMetrics extends EventLoopLagSnapshot {
  mode: 'webrtc';
  role: 'receiver';
  state: CallState;
  error: string | null;
  /** Seconds since the first frame was shown. */
  playSeconds: number;
  freezeCount: number;
  totalFreezesDurationS: number;
  /** Freeze ratio = totalFreezesDurationS / playSeconds. */
  bufferingRatio: number;
  /** = freezeCount. */
  stallCount: number;
  /** = totalFreezesDurationS. */
  stallSeconds: number;
  /** (startup + freezes) / (startup + playSeconds): the player's name, startup counted. */
  bufferingRatioWithStartup: number;
  /** The player contract's names for inbound-rtp framesDropped / framesDecoded (null before stats). */
  droppedFrames: number | null;
  decodedFrames: number | null;
  framesDecoded: number;
  framesDropped: number;
  framesReceived: number;
  framesPerSecond: number | null;
  frameWidth: number | null;
  frameHeight: number | null;
  jitterBufferDelayMs: number | null;
  bytesReceived: number;
  /** Over the last 2 s. */
  receiveBitrateBps: number | null;
  packetsReceived: number;
  packetsLost: number;
  nackCount: number;
  pliCount: number;
  codec: string | null;
  roundTripTimeMs: number | null;
  /** From receiving the offer to the first frame shown (null before it). */
  startupDelayMs: number | null;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  latencyMeanMs: number | null;
  latencyMaxMs: number | null;
  latencyLastMs: number | null;
  framesShown: number;
  framesSkipped: number;
  framesUnreadable: number;
}

export interface ReceiverClock {
  state: CallState;
  error: string | null;
  nowMs: number;
  offerAtMs: number | null;
  firstFrameAtMs: number | null;
  receiveBitrateBps: number | null;
}

/**
 * The player's `bufferingRatioWithStartup` for a call: startup (offer → first frame, or → now
 * while waiting) and freezes over the whole session; `playSeconds` already holds the freezes.
 */
export function callBufferingRatioWithStartup(clock: ReceiverClock, playSeconds: number, freezesS: number): number {
  const startupEnd = clock.firstFrameAtMs ?? clock.nowMs;
  const startupS = clock.offerAtMs === null ? 0 : Math.max(0, (startupEnd - clock.offerAtMs) / 1000);
  const session = startupS + playSeconds;
  return session > 0 ? Math.min(1, (startupS + freezesS) / session) : 0;
}

export function receiverMetrics(sample: InboundSample | null, clock: ReceiverClock, latency: LatencySnapshot, lag: EventLoopLagSnapshot): ReceiverMetrics {
  const playSeconds = clock.firstFrameAtMs === null ? 0 : Math.max(0, (clock.nowMs - clock.firstFrameAtMs) / 1000);
  const freezes = sample?.totalFreezesDurationS ?? 0;
  const freezeCount = sample?.freezeCount ?? 0;
  return {
    mode: 'webrtc',
    role: 'receiver',
    state: clock.state,
    error: clock.error,
    playSeconds,
    freezeCount,
    totalFreezesDurationS: freezes,
    bufferingRatio: freezeRatio(freezes, playSeconds),
    stallCount: freezeCount,
    stallSeconds: freezes,
    bufferingRatioWithStartup: callBufferingRatioWithStartup(clock, playSeconds, freezes),
    droppedFrames: sample?.framesDropped ?? null,
    decodedFrames: sample?.framesDecoded ?? null,
    eventLoopLagP95Ms: lag.eventLoopLagP95Ms,
    eventLoopLagMaxMs: lag.eventLoopLagMaxMs,
    framesDecoded: sample?.framesDecoded ?? 0,
    framesDropped: sample?.framesDropped ?? 0,
    framesReceived: sample?.framesReceived ?? 0,
    framesPerSecond: sample?.framesPerSecond ?? null,
    frameWidth: sample?.frameWidth ?? null,
    frameHeight: sample?.frameHeight ?? null,
    jitterBufferDelayMs: sample === null ? null : jitterBufferDelayMs(sample),
    bytesReceived: sample?.bytesReceived ?? 0,
    receiveBitrateBps: clock.receiveBitrateBps,
    packetsReceived: sample?.packetsReceived ?? 0,
    packetsLost: sample?.packetsLost ?? 0,
    nackCount: sample?.nackCount ?? 0,
    pliCount: sample?.pliCount ?? 0,
    codec: sample?.codec ?? null,
    roundTripTimeMs: sample?.roundTripTimeMs ?? null,
    startupDelayMs: clock.offerAtMs !== null && clock.firstFrameAtMs !== null ? clock.firstFrameAtMs - clock.offerAtMs : null,
    latencyP50Ms: latency.latencyP50Ms,
    latencyP95Ms: latency.latencyP95Ms,
    latencyMeanMs: latency.latencyMeanMs,
    latencyMaxMs: latency.latencyMaxMs,
    latencyLastMs: latency.latencyLastMs,
    framesShown: latency.framesShown,
    framesSkipped: latency.framesSkipped,
    framesUnreadable: latency.framesUnreadable,
  };
}

/**
 * The sender page's `metrics()`: the page's own context and the outbound-rtp counters (with the
 * RTT folded into `roundTripTimeMs`: the receiver's RTCP report when there is one).
 */
export interface SenderMetrics extends Omit<OutboundSample, 'remoteRoundTripTimeMs'>, SenderContext {
  mode: 'webrtc';
  role: 'sender';
}

export interface SenderContext {
  state: CallState;
  error: string | null;
  rendition: string | null;
  /** The capture canvas (the source rendition's size). */
  captureWidth: number | null;
  captureHeight: number | null;
  /** Frames drawn and stamped on the canvas. */
  framesCaptured: number;
  /** The configured cap (RTCRtpEncodingParameters.maxBitrate). */
  maxBitrateBps: number;
  degradationPreference: string | null;
  /** Over the last 2 s. */
  sendBitrateBps: number | null;
}

export function senderMetrics(sample: OutboundSample | null, ctx: SenderContext): SenderMetrics {
  return {
    mode: 'webrtc',
    role: 'sender',
    ...ctx,
    targetBitrateBps: sample?.targetBitrateBps ?? null,
    availableOutgoingBitrateBps: sample?.availableOutgoingBitrateBps ?? null,
    bytesSent: sample?.bytesSent ?? 0,
    framesEncoded: sample?.framesEncoded ?? 0,
    framesSent: sample?.framesSent ?? 0,
    framesPerSecond: sample?.framesPerSecond ?? null,
    frameWidth: sample?.frameWidth ?? null,
    frameHeight: sample?.frameHeight ?? null,
    qualityLimitationReason: sample?.qualityLimitationReason ?? null,
    qualityLimitationDurations: sample?.qualityLimitationDurations ?? null,
    encoderImplementation: sample?.encoderImplementation ?? null,
    codec: sample?.codec ?? null,
    nackCount: sample?.nackCount ?? 0,
    pliCount: sample?.pliCount ?? 0,
    retransmittedBytesSent: sample?.retransmittedBytesSent ?? 0,
    roundTripTimeMs: sample?.remoteRoundTripTimeMs ?? sample?.roundTripTimeMs ?? null,
    remoteFractionLost: sample?.remoteFractionLost ?? null,
  };
}

/** Latency samples with the wall-clock time each frame was shown, for per-phase figures. */
export interface TimedLatency {
  shownAtMs: number;
  latencyMs: number;
}

export interface LatencyWindow {
  frames: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  latencyMeanMs: number | null;
  latencyMaxMs: number | null;
}

/** Figures over the frames shown in [fromMs, toMs) (wall clock, ms since the Unix epoch). */
export function latencyWindow(samples: readonly TimedLatency[], fromMs: number, toMs: number): LatencyWindow {
  const values = samples.filter((s) => s.shownAtMs >= fromMs && s.shownAtMs < toMs).map((s) => s.latencyMs);
  return {
    frames: values.length,
    latencyP50Ms: percentile(values, 0.5),
    latencyP95Ms: percentile(values, 0.95),
    latencyMeanMs: values.length > 0 ? values.reduce((a, b) => a + b, 0) / values.length : null,
    latencyMaxMs: values.length > 0 ? values.reduce((a, b) => Math.max(a, b), -Infinity) : null,
  };
}

import '../style.css';
import { stampCode } from '../latency/framecode';
import { PLAYER_VERSION } from '../version';
import { senderMetrics, type CallState, type SenderMetrics } from './metrics';
import { chooseRendition, parseSenderParams, type RenditionInfo, type SenderParams } from './params';
import { iceGatheringComplete, relayCandidates, SignallingClient } from './signalling';
import { parseOutbound, RateWindow, type OutboundSample, type StatsEntry } from './stats';

/**
 * The WebRTC sender (webrtc-send.html): loops the live channel's media in a <video>, draws
 * every frame onto a canvas stamped with its capture time (ms since `epochMs`, mod 2^24, in
 * the frame-code layout of web/src/latency/framecode.ts), and sends the canvas's captured
 * track through RTCPeerConnection, relay-only, to the receiver page of the same room.
 */

export interface SenderApi {
  version: string;
  metrics(): SenderMetrics;
  /** The raw getStats() entries of the last poll. */
  stats(): StatsEntry[];
}

const CODE_PERIOD = 2 ** 24;
const STATS_INTERVAL_MS = 500;

const statusEl = document.querySelector('#status') as HTMLElement;
const errorEl = document.querySelector('#error') as HTMLElement;
const warningsEl = document.querySelector('#warnings') as HTMLElement;
const source = document.querySelector('#source') as HTMLVideoElement;
const canvas = document.querySelector('#canvas') as HTMLCanvasElement;

let state: CallState = 'loading';
let error: string | null = null;
let rendition: RenditionInfo | null = null;
let framesCaptured = 0;
let appliedDegradation: string | null = null;
let lastSample: OutboundSample | null = null;
let lastEntries: StatsEntry[] = [];
const sendRate = new RateWindow();
const parsed = parseSenderParams(window.location.search);
const params: SenderParams = parsed.params;
// Embedded in the receiver page (pccstream demo): a thumbnail of the source and the canvas.
if (new URLSearchParams(window.location.search).get('compact') === '1') document.body.classList.add('compact', 'webrtc-sender');

const api: SenderApi = {
  version: PLAYER_VERSION,
  metrics: () =>
    senderMetrics(lastSample, {
      state,
      error,
      rendition: rendition?.id ?? null,
      captureWidth: rendition?.width ?? null,
      captureHeight: rendition?.height ?? null,
      framesCaptured,
      maxBitrateBps: params.maxBitrateBps,
      degradationPreference: appliedDegradation,
      sendBitrateBps: sendRate.rateBps(),
    }),
  stats: () => lastEntries,
};
(window as unknown as { pccstream: SenderApi }).pccstream = api;

function setState(next: CallState, text: string): void {
  state = next;
  statusEl.textContent = text;
}

function fail(message: string): void {
  error = message;
  setState('failed', 'failed');
  errorEl.textContent = `Error: ${message}`;
  errorEl.hidden = false;
}

async function loadSource(): Promise<RenditionInfo> {
  const response = await fetch('/media/live/', { cache: 'no-store' });
  if (!response.ok) throw new Error(`GET /media/live/: HTTP ${response.status}`);
  const listing = (await response.json()) as { renditions: RenditionInfo[] };
  const chosen = chooseRendition(listing.renditions, params.rendition, params.maxBitrateBps);
  if (chosen === null) throw new Error(`rendition=${params.rendition ?? ''}: no such rendition (known: ${listing.renditions.map((r) => r.id).join(', ')})`);
  const file = await fetch(`/media/live/${encodeURIComponent(chosen.id)}.mp4`, { cache: 'no-store' });
  if (!file.ok) throw new Error(`GET /media/live/${chosen.id}.mp4: HTTP ${file.status}`);
  // A blob is seekable without HTTP ranges, so `loop` restarts cleanly.
  source.src = URL.createObjectURL(await file.blob());
  source.loop = true;
  source.muted = true;
  await source.play();
  return chosen;
}

/** Draws the source onto the canvas at `fps`, stamping each frame with its capture time. */
function startCapture(ctx: CanvasRenderingContext2D, epochMs: number, fps: number, width: number, height: number): void {
  const frameMs = 1000 / fps;
  const start = performance.now();
  let k = 0;
  const tick = (): void => {
    const nowMs = performance.timeOrigin + performance.now();
    ctx.drawImage(source, 0, 0, width, height);
    stampCode(ctx, Math.round(nowMs - epochMs) % CODE_PERIOD, height);
    framesCaptured += 1;
    k += 1;
    // Drift-free schedule; after a long stall (a busy machine) skip ahead rather than burst.
    const late = performance.now() - (start + k * frameMs);
    if (late > frameMs) k += Math.floor(late / frameMs);
    setTimeout(tick, Math.max(0, start + k * frameMs - performance.now()));
  };
  tick();
}

function preferCodec(transceiver: RTCRtpTransceiver, codec: string): void {
  const capabilities = RTCRtpSender.getCapabilities('video');
  if (capabilities === null) return;
  const wanted = `video/${codec}`.toLowerCase();
  const first = capabilities.codecs.filter((c) => c.mimeType.toLowerCase() === wanted);
  if (first.length === 0) throw new Error(`codec=${codec}: this browser cannot send it`);
  const rest = capabilities.codecs.filter((c) => c.mimeType.toLowerCase() !== wanted);
  transceiver.setCodecPreferences([...first, ...rest]);
}

async function applyEncoding(sender: RTCRtpSender): Promise<void> {
  const parameters = sender.getParameters() as RTCRtpSendParameters & { degradationPreference?: string };
  if (parameters.encodings.length === 0) parameters.encodings = [{}];
  for (const encoding of parameters.encodings) encoding.maxBitrate = params.maxBitrateBps;
  parameters.degradationPreference = params.degradation;
  try {
    await sender.setParameters(parameters);
    const applied = sender.getParameters() as RTCRtpSendParameters & { degradationPreference?: string };
    appliedDegradation = applied.degradationPreference ?? params.degradation;
  } catch (e) {
    // Older browsers refuse degradationPreference: keep the bitrate cap at least.
    delete parameters.degradationPreference;
    await sender.setParameters(parameters);
    appliedDegradation = null;
    warningsEl.textContent = `degradationPreference not applied: ${e instanceof Error ? e.message : String(e)}`;
    warningsEl.hidden = false;
  }
}

async function pollStats(pc: RTCPeerConnection): Promise<void> {
  const report = await pc.getStats();
  lastEntries = [...report.values()] as StatsEntry[];
  lastSample = parseOutbound(lastEntries);
  if (lastSample !== null) sendRate.add(performance.now(), lastSample.bytesSent);
}

async function main(): Promise<void> {
  if (parsed.warnings.length > 0) {
    warningsEl.textContent = parsed.warnings.join('; ');
    warningsEl.hidden = false;
  }
  if (parsed.errors.length > 0) throw new Error(parsed.errors.join('; '));
  setState('loading', 'loading the source video');
  rendition = await loadSource();
  const { width, height } = rendition;
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d', { alpha: false });
  if (ctx === null) throw new Error('no 2D canvas context');
  const epochMs = Math.floor(performance.timeOrigin + performance.now());
  startCapture(ctx, epochMs, params.fps, width, height);

  // No frame rate argument: a frame is captured each time the canvas changes (at `fps`, by the
  // draw timer). captureStream(30) drops any frame that comes < 1/30 s after the previous
  // one, so timer jitter would halve the frame rate.
  const stream = canvas.captureStream();
  const track = stream.getVideoTracks()[0];
  if (track === undefined) throw new Error('canvas.captureStream() gave no video track');
  track.contentHint = 'motion';
  const pc = new RTCPeerConnection({ iceServers: [params.iceServer], iceTransportPolicy: 'relay' });
  const transceiver = pc.addTransceiver(track, { direction: 'sendonly', streams: [stream] });
  if (params.codec !== null) preferCodec(transceiver, params.codec);
  await applyEncoding(transceiver.sender);
  pc.addEventListener('connectionstatechange', () => {
    if (pc.connectionState === 'connected') setState('sending', `sending ${rendition?.id ?? ''} ${width}×${height} at ≤ ${params.maxBitrateBps / 1e6} Mbit/s`);
    else if (pc.connectionState === 'failed') fail('the peer connection failed (ICE or DTLS through the TURN relay)');
    else if (pc.connectionState === 'closed') setState('closed', 'closed');
  });
  setInterval(() => void pollStats(pc).catch(() => undefined), STATS_INTERVAL_MS);

  setState('connecting', 'gathering relay candidates');
  await pc.setLocalDescription(await pc.createOffer());
  await iceGatheringComplete(pc);
  const sdp = pc.localDescription?.sdp ?? '';
  if (relayCandidates(sdp) === 0) throw new Error(`no relay candidate from ${String(params.iceServer.urls)}: is the TURN server running, with these credentials?`);
  const signalling = new SignallingClient(params.room);
  const offerId = await signalling.postOffer(sdp, { epochMs, fps: params.fps, width, height, rendition: rendition.id });
  setState('waiting-answer', `waiting for a receiver in room ${params.room}`);
  const answer = await signalling.waitAnswer(offerId);
  setState('connecting', 'connecting');
  await pc.setRemoteDescription({ type: 'answer', sdp: answer });
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)));

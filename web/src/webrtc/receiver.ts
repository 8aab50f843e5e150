import '../style.css';
import { watchFrameCodes } from '../latency/watch';
import { PLAYER_VERSION } from '../version';
import { latencyWindow, receiverMetrics, type CallState, type LatencyWindow, type ReceiverMetrics } from './metrics';
import { parseReceiverParams } from './params';
import { iceGatheringComplete, relayCandidates, SignallingClient, type SenderMeta } from './signalling';
import { parseInbound, RateWindow, type InboundSample, type StatsEntry } from './stats';
import { TimedLatencyTracker } from './timed-tracker';

/**
 * The WebRTC receiver (webrtc-recv.html): answers the room's offer, shows the remote track,
 * reads the sender's capture-time stamp from every frame shown (glass-to-glass latency) and
 * reports getStats() figures as `window.pccstream.metrics()`.
 */

export interface ReceiverApi {
  version: string;
  metrics(): ReceiverMetrics;
  /** Latency figures of the frames shown in [fromMs, toMs), wall clock (Date.now() scale). */
  latencyWindow(fromMs: number, toMs: number): LatencyWindow;
  /** The raw getStats() entries of the last poll. */
  stats(): StatsEntry[];
}

const STATS_INTERVAL_MS = 500;

const statusEl = document.querySelector('#status') as HTMLElement;
const errorEl = document.querySelector('#error') as HTMLElement;
const warningsEl = document.querySelector('#warnings') as HTMLElement;
const video = document.querySelector('#video') as HTMLVideoElement;

let state: CallState = 'loading';
let error: string | null = null;
let offerAtMs: number | null = null;
let firstFrameAtMs: number | null = null;
let lastSample: InboundSample | null = null;
let lastEntries: StatsEntry[] = [];
const receiveRate = new RateWindow();
const tracker = new TimedLatencyTracker();
const parsed = parseReceiverParams(window.location.search);

const wallNow = (): number => performance.timeOrigin + performance.now();

const api: ReceiverApi = {
  version: PLAYER_VERSION,
  metrics: () =>
    receiverMetrics(lastSample, { state, error, nowMs: wallNow(), offerAtMs, firstFrameAtMs, receiveBitrateBps: receiveRate.rateBps() }, tracker.snapshot()),
  latencyWindow: (fromMs, toMs) => latencyWindow(tracker.timed, fromMs, toMs),
  stats: () => lastEntries,
};
(window as unknown as { pccstream: ReceiverApi }).pccstream = api;

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

function parseMeta(meta: Record<string, unknown>): SenderMeta {
  const epochMs = meta['epochMs'];
  const fps = meta['fps'];
  if (typeof epochMs !== 'number' || typeof fps !== 'number' || fps <= 0) throw new Error('the offer carries no capture clock (meta.epochMs, meta.fps)');
  return meta as unknown as SenderMeta;
}

async function pollStats(pc: RTCPeerConnection): Promise<void> {
  const report = await pc.getStats();
  lastEntries = [...report.values()] as StatsEntry[];
  lastSample = parseInbound(lastEntries);
  if (lastSample !== null) receiveRate.add(performance.now(), lastSample.bytesReceived);
}

async function main(): Promise<void> {
  if (parsed.warnings.length > 0) {
    warningsEl.textContent = parsed.warnings.join('; ');
    warningsEl.hidden = false;
  }
  if (parsed.errors.length > 0) throw new Error(parsed.errors.join('; '));
  const { params } = parsed;
  const signalling = new SignallingClient(params.room);
  setState('waiting-offer', `waiting for a sender in room ${params.room}`);
  const offer = await signalling.waitOffer();
  offerAtMs = wallNow();
  const meta = parseMeta(offer.meta);
  tracker.setClock({ epochMs: meta.epochMs, unitMs: 1, periodCodes: 2 ** 24, codesPerFrame: 1000 / meta.fps });

  const pc = new RTCPeerConnection({ iceServers: [params.iceServer], iceTransportPolicy: 'relay' });
  pc.addEventListener('track', (event) => {
    video.srcObject = event.streams[0] ?? new MediaStream([event.track]);
    video.requestVideoFrameCallback(() => {
      firstFrameAtMs ??= wallNow();
      setState('playing', `playing ${meta.rendition} from room ${params.room}`);
    });
    watchFrameCodes(video, tracker);
    void video.play().catch(() => undefined);
  });
  pc.addEventListener('connectionstatechange', () => {
    if (pc.connectionState === 'failed') fail('the peer connection failed (ICE or DTLS through the TURN relay)');
    else if (pc.connectionState === 'closed') setState('closed', 'closed');
  });
  setInterval(() => void pollStats(pc).catch(() => undefined), STATS_INTERVAL_MS);

  setState('connecting', 'answering');
  await pc.setRemoteDescription({ type: 'offer', sdp: offer.sdp });
  await pc.setLocalDescription(await pc.createAnswer());
  await iceGatheringComplete(pc);
  const sdp = pc.localDescription?.sdp ?? '';
  if (relayCandidates(sdp) === 0) throw new Error(`no relay candidate from ${String(params.iceServer.urls)}: is the emulator (or TURN server) running, with these credentials?`);
  await signalling.postAnswer(offer.offer_id, sdp);
  setState('connecting', 'connecting');
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)));

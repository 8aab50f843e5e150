import '../style.css';
import { parseDashboardParams, type DashboardSnapshot } from '../dashboard';
import { watchFrameCodes } from '../latency/watch';
import { EventLoopLag, watchEventLoop } from '../metrics/event-loop-lag';
import { PLAYER_VERSION } from '../version';
import { WebrtcDashboard } from './dashboard';
import type { SenderFigures } from './dashboard-model';
import { latencyWindow, receiverMetrics, type CallState, type LatencyWindow, type ReceiverMetrics, type SenderMetrics } from './metrics';
import { parseReceiverParams } from './params';
import { iceGatheringComplete, relayCandidates, SignallingClient, type SenderMeta } from './signalling';
import { parseInbound, RateWindow, type InboundSample, type StatsEntry } from './stats';
import { TimedLatencyTracker } from './timed-tracker';

/**
 * The WebRTC receiver (webrtc-recv.html): answers the room's offer, shows the remote track,
 * reads the sender's capture-time stamp from every frame shown (glass-to-glass latency) and
 * reports getStats() figures as `window.pccstream.metrics()`.
 *
 * With `sender=QUERY` (what `pccstream demo` gives) it embeds the sender page itself, in a
 * small iframe beside the video, in a room of its own (`room` + a random suffix, so a reload
 * never meets a stale offer), and its dashboard draws the sender's target bitrate and GCC
 * estimate beside the receiver's series (web/src/webrtc/dashboard-model.ts).
 */

export interface ReceiverApi {
  version: string;
  metrics(): ReceiverMetrics;
  /** Latency figures of the frames shown in [fromMs, toMs), wall clock (Date.now() scale). */
  latencyWindow(fromMs: number, toMs: number): LatencyWindow;
  /** The raw getStats() entries of the last poll. */
  stats(): StatsEntry[];
  /** The embedded sender's metrics (null without `sender=`, or before it runs). */
  sender(): SenderMetrics | null;
  /** The dashboard's state (null without a dashboard root on the page). */
  dashboard(): DashboardSnapshot | null;
}

const STATS_INTERVAL_MS = 500;
/** Glass-to-glass latency is sampled for the dashboard at its rate (the player's 10 Hz). */
const LATENCY_SAMPLE_MS = 100;

const statusEl = document.querySelector('#status') as HTMLElement;
const errorEl = document.querySelector('#error') as HTMLElement;
const warningsEl = document.querySelector('#warnings') as HTMLElement;
const video = document.querySelector('#video') as HTMLVideoElement;
const senderFrame = document.querySelector('#sender-frame') as HTMLIFrameElement | null;
const dashboardRoot = document.querySelector('#dashboard') as HTMLElement | null;

let state: CallState = 'loading';
let error: string | null = null;
let offerAtMs: number | null = null;
let firstFrameAtMs: number | null = null;
let lastSample: InboundSample | null = null;
let lastEntries: StatsEntry[] = [];
const receiveRate = new RateWindow();
const tracker = new TimedLatencyTracker();
const lag = new EventLoopLag();
// As the player: the main thread's lag once frames are shown.
watchEventLoop(lag, () => firstFrameAtMs !== null);
const parsed = parseReceiverParams(window.location.search);
const dashboardParsed = parseDashboardParams(window.location.search);
if (dashboardParsed.params.compact) document.body.classList.add('compact');

const wallNow = (): number => performance.timeOrigin + performance.now();

/** An embedded sender gets a room of its own per page load. */
const room = parsed.params.sender === null ? parsed.params.room : `${parsed.params.room.slice(0, 55)}-${Math.random().toString(36).slice(2, 9)}`;

function senderMetrics(): SenderMetrics | null {
  try {
    const win = senderFrame?.contentWindow as unknown as { pccstream?: { metrics(): SenderMetrics } } | null | undefined;
    return win?.pccstream?.metrics() ?? null;
  } catch {
    return null; // navigating
  }
}

function senderFigures(): SenderFigures | null {
  const m = senderMetrics();
  return m === null ? null : { targetBitrateBps: m.targetBitrateBps, availableOutgoingBitrateBps: m.availableOutgoingBitrateBps, sendBitrateBps: m.sendBitrateBps, roundTripTimeMs: m.roundTripTimeMs };
}

const dashboard =
  dashboardRoot === null
    ? null
    : new WebrtcDashboard(dashboardRoot, dashboardParsed.params, dashboardParsed.params.originMs ?? Math.round(performance.timeOrigin), () => {
        const m = senderMetrics();
        const parts = [`room ${room}`, state];
        if (lastSample?.frameHeight) parts.push(`${lastSample.frameHeight}p`);
        if (m?.targetBitrateBps != null) parts.push(`target ${(m.targetBitrateBps / 1e6).toFixed(2)} Mbit/s`);
        return parts.join(' · ');
      });

const api: ReceiverApi = {
  version: PLAYER_VERSION,
  metrics: () =>
    receiverMetrics(lastSample, { state, error, nowMs: wallNow(), offerAtMs, firstFrameAtMs, receiveBitrateBps: receiveRate.rateBps() }, tracker.snapshot(), lag.snapshot()),
  latencyWindow: (fromMs, toMs) => latencyWindow(tracker.timed, fromMs, toMs),
  stats: () => lastEntries,
  sender: senderMetrics,
  dashboard: () => dashboard?.snapshot() ?? null,
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
  dashboard?.model.poll({ tMs: wallNow(), inbound: lastSample, sender: senderFigures() });
}

/** Embeds the sender page (`sender=QUERY`) in this page's room; its failure is this page's. */
function startSender(query: string): void {
  if (senderFrame === null) throw new Error('sender=: this page has no #sender-frame');
  const q = new URLSearchParams(query);
  q.set('room', room);
  q.set('compact', '1');
  senderFrame.src = `./webrtc-send.html?${q.toString()}`;
  senderFrame.hidden = false;
  senderFrame.parentElement?.classList.add('webrtc-pair');
  const check = setInterval(() => {
    const m = senderMetrics();
    if (m?.state === 'failed') {
      clearInterval(check);
      fail(`the embedded sender failed: ${m.error ?? 'no reason given'}`);
    }
  }, STATS_INTERVAL_MS);
}

async function main(): Promise<void> {
  if (parsed.warnings.length > 0) {
    warningsEl.textContent = parsed.warnings.join('; ');
    warningsEl.hidden = false;
  }
  if (parsed.errors.length > 0 || dashboardParsed.errors.length > 0) throw new Error([...parsed.errors, ...dashboardParsed.errors].join('; '));
  const { params } = parsed;
  const signalling = new SignallingClient(room);
  if (params.sender !== null) startSender(params.sender);
  setState('waiting-offer', `waiting for a sender in room ${room}`);
  const offer = await signalling.waitOffer();
  offerAtMs = wallNow();
  const meta = parseMeta(offer.meta);
  tracker.setClock({ epochMs: meta.epochMs, unitMs: 1, periodCodes: 2 ** 24, codesPerFrame: 1000 / meta.fps });

  const pc = new RTCPeerConnection({ iceServers: [params.iceServer], iceTransportPolicy: 'relay' });
  pc.addEventListener('track', (event) => {
    video.srcObject = event.streams[0] ?? new MediaStream([event.track]);
    video.requestVideoFrameCallback(() => {
      firstFrameAtMs ??= wallNow();
      setState('playing', `playing ${meta.rendition} from room ${room}`);
    });
    watchFrameCodes(video, tracker);
    void video.play().catch(() => undefined);
  });
  pc.addEventListener('connectionstatechange', () => {
    if (pc.connectionState === 'failed') fail('the peer connection failed (ICE or DTLS through the TURN relay)');
    else if (pc.connectionState === 'closed') setState('closed', 'closed');
  });
  setInterval(() => void pollStats(pc).catch(() => undefined), STATS_INTERVAL_MS);
  if (dashboard !== null) setInterval(() => dashboard.model.latency(wallNow(), tracker.lastMs), LATENCY_SAMPLE_MS);

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

import './style.css';
import { fetchConfig, type ServerConfig } from './config';
import { errorMessage } from './errors';
import { DashboardController, parseDashboardParams } from './dashboard';
import { LIVE_STALL_THRESHOLD_S } from './metrics/playback';
import { MetricsSampler } from './metrics/sampler';
import { parseParams, parseSha256Hex, sessionUrl } from './params';
import { ServerError } from './transport/response';
import { DEFAULT_RECONNECT, ReconnectingSession } from './transport/reconnect';
import { Session } from './transport/session';
import { TelemetryLog } from './transport/telemetry';
import { MetricsPanel } from './ui/panel';
import { PLAYER_VERSION } from './version';
import { Player, browserDeps } from './watch/player';
import { LatencyTracker } from './latency/latency';
import { watchFrameCodes } from './latency/watch';
import { LivePlayer, liveBrowserDeps, vodLiveMetrics } from './watch/live';
import { ReconnectingLiveSession, rejoinLiveEdge } from './watch/live-reconnect';
import type { Mode } from './params';
import type { ViewerPlayer } from './watch/viewer';

const PANEL_INTERVAL_MS = 250;

function element<T extends HTMLElement>(selector: string, type: new () => T): T {
  const el = document.querySelector(selector);
  if (!(el instanceof type)) throw new Error(`page is missing ${selector}`);
  return el;
}

const video = element('#video', HTMLVideoElement);
const statusEl = element('#status', HTMLElement);
const errorEl = element('#error', HTMLElement);
const warningsEl = element('#warnings', HTMLElement);
const panel = new MetricsPanel(element('#metrics', HTMLTableElement));
const dashboardRoot = element('#dashboard', HTMLElement);
const dashboardToggle = element('#dashboard-toggle', HTMLButtonElement);
const qlogLink = element('#qlog-link', HTMLAnchorElement);

const telemetry = new TelemetryLog();
let player: ViewerPlayer | null = null;
let playerMode: Mode = 'abr';
/** mode=live: glass-to-glass latency from the frame codes (its clock comes with LIVE_INFO). */
const latencyTracker = new LatencyTracker();
let session: Session | null = null;
/** VOD: the session that redials after a server restart. */
let vodSession: ReconnectingSession<Session> | null = null;
/** Live: the session that redials after a lost session; the player rejoins the live edge. */
let liveSession: ReconnectingLiveSession | null = null;
let config: ServerConfig | null = null;
let errorText: string | null = null;

function setStatus(text: string): void {
  statusEl.textContent = text;
}

function setError(text: string): void {
  if (errorText !== null) return; // the first error is the cause; later ones are consequences
  errorText = text;
  errorEl.textContent = `Error: ${text}`;
  errorEl.hidden = false;
  setStatus('stopped by an error');
  player?.stop();
  console.error(`pccstream: ${text}`);
}

function describeError(error: unknown): string {
  return error instanceof ServerError ? error.message : errorMessage(error);
}

const sampler = new MetricsSampler(video, {
  eos: () => player?.eos ?? false,
  renditionAt: (t) => player?.renditionAt(t) ?? null,
  segments: () => (player instanceof Player ? player.segments : []),
  error: () => errorText,
  live: () =>
    player instanceof LivePlayer
      ? player.metrics(latencyTracker.snapshot(), video.playbackRate)
      : vodLiveMetrics(playerMode, video.playbackRate),
});

const dashboardParsed = parseDashboardParams(window.location.search);
const dashboard = new DashboardController(dashboardRoot, dashboardParsed.params, { playerVersion: PLAYER_VERSION });
if (dashboardParsed.params.compact) document.body.classList.add('compact');

function showDashboard(visible: boolean): void {
  dashboard.setVisible(visible);
  dashboardToggle.textContent = visible ? 'Hide dashboard' : 'Show dashboard';
}
dashboardToggle.addEventListener('click', () => showDashboard(!dashboard.params.show));
dashboard.listenForPeers();

window.pccstream = {
  version: PLAYER_VERSION,
  metrics: () => sampler.metrics(),
  telemetry: () => telemetry.records(),
  dashboard: () => dashboard.snapshot(),
  recording: () => dashboard.jsonLines(),
  setDashboardVisible: (visible: boolean) => showDashboard(visible),
  liveAbrTrace: () => (player instanceof LivePlayer ? player.abrTrace() : null),
  reconnects: () => (vodSession ?? liveSession)?.reconnects ?? 0,
};

telemetry.onRecord = (record) => {
  dashboard.onTelemetry(record);
  if (record.type === 'hello' && typeof record['qlog_url'] === 'string') {
    qlogLink.href = record['qlog_url'];
    qlogLink.hidden = false;
  }
};

/** Stop playing and draw a recording instead (`?replay=` or a dropped file). */
function replay(text: string, source: string): void {
  player?.stop();
  (vodSession ?? liveSession ?? session)?.close();
  video.hidden = true;
  const { records, badLines } = dashboard.replay(text, source);
  showDashboard(true);
  setStatus(`replay of ${source}: ${records} records${badLines.length ? `, ${badLines.length} bad lines skipped` : ''}`);
}

document.addEventListener('dragover', (event) => event.preventDefault());
document.addEventListener('drop', (event) => {
  event.preventDefault();
  const file = event.dataTransfer?.files[0];
  if (!file) return;
  file.text().then(
    (text) => replay(text, file.name),
    (error: unknown) => setError(`cannot read ${file.name}: ${describeError(error)}`),
  );
});

video.muted = true;
video.addEventListener('error', () => {
  const e = video.error;
  if (e) setError(`media error ${e.code}${e.message ? `: ${e.message}` : ''}`);
});

async function startReplay(url: string): Promise<void> {
  setStatus(`loading recording ${url}`);
  let response: Response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new Error(`replay: cannot fetch ${url}: ${describeError(error)}`);
  }
  if (!response.ok) throw new Error(`replay: ${url} answered HTTP ${response.status}`);
  replay(await response.text(), url);
}

async function start(): Promise<void> {
  const { params, errors: playerErrors, warnings } = parseParams(window.location.search);
  playerMode = params.mode;
  if (params.mode === 'live') sampler.playback.setStallThreshold(LIVE_STALL_THRESHOLD_S);
  const errors = [...playerErrors, ...dashboardParsed.errors];
  if (warnings.length > 0) {
    warningsEl.textContent = warnings.join('\n');
    warningsEl.hidden = false;
  }
  if (errors.length > 0) {
    setError(`bad URL parameters: ${errors.join('; ')}`);
    return;
  }
  showDashboard(dashboardParsed.params.show);
  if (dashboardParsed.params.replay !== null) {
    await startReplay(dashboardParsed.params.replay);
    return;
  }
  if (params.mode === 'live') dashboard.model.enableLatency();
  dashboard.mount();
  dashboard.startPlayerSampling({
    bufferS: () => sampler.bufferAhead(),
    bitrateKbps: () => {
      const at = player?.renditionAt(video.currentTime);
      return at ? at.bitrateBps / 1000 : null;
    },
    state: () => (errorText !== null ? 'error' : sampler.playback.snapshot().state),
    currentTime: () => video.currentTime,
    quality: () => {
      if (typeof video.getVideoPlaybackQuality !== 'function') return null;
      const q = video.getVideoPlaybackQuality();
      return { dropped: q.droppedVideoFrames, total: q.totalVideoFrames };
    },
    ...(params.mode === 'live'
      ? {
          latency: () => {
            // Cheap: no latency percentiles (player.metrics(null, …) gives the playhead's lag).
            const m = player instanceof LivePlayer ? player.metrics(null, video.playbackRate) : null;
            return { latencyMs: latencyTracker.lastMs, mediaLatencyMs: m?.mediaLatencyMs ?? null, targetLatencyMs: params.live?.targetLatencyMs ?? null };
          },
          abrSwitches: () => {
            const log = player instanceof LivePlayer ? player.switchLog : [];
            const last = log[log.length - 1];
            return { count: log.length, last: last ? { toKbps: last.toKbps, reason: last.reason } : null };
          },
        }
      : {}),
  });

  video.autoplay = params.autoplay;
  if (params.autoplay) {
    // Startup counts from page start (performance.now() = 0 is navigation start).
    sampler.startRequested(0);
  } else {
    video.controls = true;
    video.addEventListener('play', () => sampler.startRequested(performance.now()), { once: true });
  }
  sampler.start();

  setStatus('fetching /api/config');
  try {
    config = await fetchConfig();
    performance.mark('pccstream:config');
  } catch (error) {
    if (params.server === null || params.certHash === null) {
      throw new Error(`cannot read the server configuration (${describeError(error)}); give server= and certHash= to play without it`);
    }
  }

  // `cc=NAME:KEY=VALUE` (e.g. remy:table=2014-100x): the server checks the parameters.
  const cc = params.forwarded.find(([name]) => name === 'cc')?.[1]?.split(':')[0] ?? null;
  if (cc !== null && config?.controllers && !config.controllers.includes(cc)) {
    throw new Error(`unknown congestion controller "${cc}"; the server has ${config.controllers.join(', ')}`);
  }

  const base = params.server ?? config?.webtransport_url;
  if (!base) throw new Error('no WebTransport URL');
  let certHash = params.certHash;
  if (certHash === null && config) {
    certHash = parseSha256Hex(config.certificate_sha256);
    if (certHash === null) throw new Error('/api/config certificate_sha256 is not a SHA-256 hex digest');
  }
  // Compressed telemetry (docs/dashboard.md): ~5x fewer bytes than plain frames.
  const telemetryEncoding = new URLSearchParams(window.location.search).get('telemetry') ?? 'deflate';
  const url = sessionUrl(base, [...params.forwarded, ['telemetry', telemetryEncoding]]);
  setStatus(`connecting to ${url}`);
  session = await Session.connect(url, certHash, telemetry);
  performance.mark('pccstream:connected');
  const current = session;
  window.addEventListener('pagehide', () => (vodSession ?? liveSession ?? current).close());

  const hooks = {
    status: setStatus,
    firstMedia: (): void => {
      performance.mark('pccstream:first-media');
      if (params.autoplay) {
        video.play().catch((error: unknown) => {
          setStatus(`autoplay refused (${describeError(error)}): press play`);
          video.controls = true;
        });
      }
    },
  };
  if (params.mode === 'live') {
    let watchingFrames = false;
    const liveHooks = {
      ...hooks,
      // Again after a rejoin on a restarted channel (a new epoch): the clock changes.
      liveInfo: (_info: unknown, clock: Parameters<LatencyTracker['setClock']>[0]): void => {
        latencyTracker.setClock(clock);
        if (!watchingFrames && typeof video.requestVideoFrameCallback === 'function') {
          watchingFrames = true;
          watchFrameCodes(video, latencyTracker);
        }
      },
    };
    const reconnecting = new ReconnectingLiveSession(session, () => Session.connect(url, certHash, telemetry), {
      ...DEFAULT_RECONNECT,
      status: setStatus,
    });
    liveSession = reconnecting;
    const live = new LivePlayer(reconnecting, video, params, liveHooks, liveBrowserDeps(video));
    reconnecting.onRejoin = () => {
      rejoinLiveEdge(live, reconnecting).catch((error: unknown) => setError(describeError(error)));
    };
    player = live;
    await live.run();
    return;
  }
  vodSession = new ReconnectingSession(session, () => Session.connect(url, certHash, telemetry), {
    ...DEFAULT_RECONNECT,
    status: setStatus,
  });
  const vod = new Player(vodSession, video, params, hooks, browserDeps(video));
  player = vod;
  await vod.run();
}

function updatePanel(): void {
  const m = sampler.metrics();
  const vod = player instanceof Player ? player : null;
  const decision = vod?.lastDecision;
  const throughput = vod?.throughputEstimateBps() ?? null;
  const connection = vodSession ?? liveSession ?? session;
  panel.render(m, {
    session: connection?.url ?? null,
    cc: (telemetry.hello?.['cc'] as string | undefined) ?? config?.default_cc ?? null,
    throughputKbps: throughput === null ? null : throughput / 1000,
    decision: decision ? `${decision.reason} → ${decision.index}` : null,
    telemetryRecords: telemetry.length,
    controllerRows: dashboard.model.controllerRows(),
  });
  if (dashboard.mode === 'replay') return;
  if (connection?.closedReason && errorText === null && !(m.ended || player?.eos)) setError(connection.closedReason);
}

setInterval(updatePanel, PANEL_INTERVAL_MS);
window.addEventListener('unhandledrejection', (event) => setError(describeError(event.reason)));
start().catch((error: unknown) => setError(describeError(error)));

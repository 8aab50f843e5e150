// First: starts the session while the rest of the page is evaluated (boot.ts).
import { connect, earlyConnection, liveDatagramSetup, startupTimeline, telemetryLog } from './boot';
import './style.css';
import type { ServerConfig } from './config';
import { errorMessage } from './errors';
import { DashboardController, parseDashboardParams } from './dashboard';
import { LIVE_STALL_THRESHOLD_S } from './metrics/playback';
import { MetricsSampler } from './metrics/sampler';
import { parseParams } from './params';
import { ServerError } from './transport/response';
import { DEFAULT_RECONNECT, ReconnectingSession } from './transport/reconnect';
import { Session } from './transport/session';
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

const telemetry = telemetryLog;
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

const sampler = new MetricsSampler(video, startupTimeline, {
  eos: () => player?.eos ?? false,
  renditionAt: (t) => player?.renditionAt(t) ?? null,
  segments: () => (player instanceof Player ? player.segments : []),
  error: () => errorText,
  live: () =>
    player instanceof LivePlayer
      ? player.metrics(latencyTracker.snapshot(), video.playbackRate)
      : vodLiveMetrics(playerMode, video.playbackRate),
});

/** The first frame presented after the play request (requestVideoFrameCallback): startupPhases.firstFrameMs. */
function watchFirstFrame(): void {
  if (typeof video.requestVideoFrameCallback !== 'function') return;
  video.requestVideoFrameCallback((_now, frame) => {
    if (!sampler.startup.frameShown(frame.presentationTime)) watchFirstFrame();
  });
}

const dashboardParsed = parseDashboardParams(window.location.search);
const dashboard = new DashboardController(dashboardRoot, dashboardParsed.params, { playerVersion: PLAYER_VERSION });
if (dashboardParsed.params.compact) document.body.classList.add('compact');

/**
 * A hidden dashboard (dashboard=0, as in A/B runs) builds its charts only when it is shown:
 * building them, and again when `hello` names the controller, took the main thread just as
 * the session became ready and the first responses came in. Its data is recorded regardless.
 */
let dashboardMountDeferred = false;

function mountDeferredDashboard(): void {
  if (!dashboardMountDeferred) return;
  dashboardMountDeferred = false;
  dashboard.mount();
}

function showDashboard(visible: boolean): void {
  if (visible) mountDeferredDashboard();
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
  liveStart: () => (player instanceof LivePlayer ? player.startState() : null),
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
  video.autoplay = params.autoplay;
  if (params.autoplay) {
    // Startup counts from page start (performance.now() = 0 is navigation start).
    sampler.startRequested(0);
  } else {
    video.controls = true;
    video.addEventListener('play', () => sampler.startRequested(performance.now()), { once: true });
  }
  sampler.start();
  watchFirstFrame();
  // VOD: the MediaSource opens while the session is being set up.
  const vodDeps = params.mode === 'live' ? null : browserDeps(video, () => sampler.startup.mark('mediaSourceOpenMs', performance.now()));
  vodDeps?.prepare?.();
  // The session is set up while the page draws itself (the dashboard below).
  const connecting = earlyConnection ?? connect(params, setStatus);
  connecting.catch(() => undefined); // awaited below

  if (params.mode === 'live') dashboard.model.enableLatency();
  if (dashboard.params.show) dashboard.mount();
  else dashboardMountDeferred = true;
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

  const { session: opened, url, certHash, config: fetched } = await connecting;
  config = fetched;
  session = opened;
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
    step: (phase: 'initAppendedMs' | 'firstChunkAppendedMs'): void => sampler.startup.mark(phase, performance.now()),
  };
  if (params.mode === 'live' || vodDeps === null) {
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
    const datagrams = liveDatagramSetup(params);
    const reconnecting = new ReconnectingLiveSession(session, () => Session.connect(url, certHash, telemetry, null, [], null, datagrams), {
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
  const vod = new Player(vodSession, video, params, hooks, vodDeps);
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

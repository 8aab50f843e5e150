/**
 * The player page's first module (main.ts imports it first): with autoplay, the play request is
 * the navigation, so the WebTransport session is set up from here, while the rest of the player
 * (dashboard, charts, players) is still being evaluated, rather than after it. It opens the
 * same one session the player then uses, after the play request, never before it: with
 * `autoplay=0`, on replay pages, or with bad parameters it does nothing and main.ts connects
 * as before.
 */
import { fetchConfig, type ServerConfig } from './config';
import { StartupTimeline } from './metrics/startup';
import { liveGiveUpMs, parseParams, parseSha256Hex, sessionLiveFec, sessionUrl, type PlayerParams } from './params';
import { discardEarlySession, takeEarlySession } from './transport/early';
import { firstPushes, pushParameters, type PushKey } from './transport/pushed';
import { newLiveDatagramCounters } from './transport/live-datagrams';
import { Session, type LiveDatagramSetup } from './transport/session';
import { TelemetryLog } from './transport/telemetry';

/** When the player's first module started running (page loaded and parsed). */
export const scriptStartMs = performance.now();
/** The steps of startup (metrics().startupPhases). */
export const startupTimeline = new StartupTimeline();
startupTimeline.mark('scriptStartMs', scriptStartMs);
/** Telemetry of the session, from its first record. */
export const telemetryLog = new TelemetryLog();

/** GET /api/config: index.html's early request, else one sent now. */
export const configFetch: Promise<{ config: ServerConfig; atMs: number }> = fetchConfig('/api/config', window.pccstreamConfigRequest).then(
  (c) => ({ config: c, atMs: performance.now() }),
);
configFetch.catch(() => undefined); // reported when the player needs the answer

/** Live over datagrams: one counters object for the page's sessions (reconnects add to it). */
const liveDatagramCounters = newLiveDatagramCounters();

/** How the page's sessions assemble datagram groups (null with `fec=streams`: groups on streams). */
export function liveDatagramSetup(params: PlayerParams): LiveDatagramSetup | null {
  const live = params.live;
  return live === undefined || sessionLiveFec(live) === null ? null : { keepMs: liveGiveUpMs(live), counters: liveDatagramCounters };
}

export interface Connected {
  session: Session;
  url: string;
  certHash: Uint8Array | null;
  config: ServerConfig | null;
}

/**
 * Config (fetched since the page started), then the WebTransport session: the one index.html
 * opened early if it is the one wanted, else a new one. The early one is taken once (reconnects
 * and later plays start their own) and closed if it is not used.
 */
export async function connect(params: PlayerParams, status: (text: string) => void = () => undefined): Promise<Connected> {
  const started = window.pccstreamEarlySession;
  window.pccstreamEarlySession = null;
  let target: SessionTarget;
  try {
    target = await sessionTarget(params, status);
  } catch (error) {
    discardEarlySession(started);
    throw error;
  }
  const { url, firstUrl, certHash, config, pushes } = target;
  status(`connecting to ${firstUrl}`);
  const early = await takeEarlySession(firstUrl, certHash, started);
  const session = await Session.connect(firstUrl, certHash, telemetryLog, startupTimeline, pushes, early, liveDatagramSetup(params));
  return { session, url, certHash, config };
}

interface SessionTarget {
  /** The session URL (reconnects dial it). */
  url: string;
  /** The first session's: `url` plus what it asks the server to push. */
  firstUrl: string;
  certHash: Uint8Array | null;
  config: ServerConfig | null;
  pushes: PushKey[];
}

async function sessionTarget(params: PlayerParams, status: (text: string) => void): Promise<SessionTarget> {
  status('fetching /api/config');
  let config: ServerConfig | null = null;
  try {
    const fetched = await configFetch;
    config = fetched.config;
    startupTimeline.mark('configReadyMs', fetched.atMs);
    performance.mark('pccstream:config');
  } catch (error) {
    if (params.server === null || params.certHash === null) {
      throw new Error(`cannot read the server configuration (${error instanceof Error ? error.message : String(error)}); give server= and certHash= to play without it`);
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
  // The first session asks for the start's init and first segment with its CONNECT
  // (`vod.first`): they come without a request round trip. Reconnects (to `url`) do not.
  const pushes = firstPushes(params);
  const firstUrl = pushes.length > 0 ? sessionUrl(url, pushParameters(pushes)) : url;
  return { url, firstUrl, certHash, config, pushes };
}

function connectsAtOnce(): PlayerParams | null {
  const query = new URLSearchParams(window.location.search);
  if (query.has('replay')) return null;
  const { params, errors } = parseParams(window.location.search);
  return errors.length === 0 && params.autoplay ? params : null;
}

const early = connectsAtOnce();
/** The session being set up since the page started (autoplay), else null. */
export const earlyConnection: Promise<Connected> | null = early === null ? null : connect(early);
if (early === null) {
  discardEarlySession(window.pccstreamEarlySession);
  window.pccstreamEarlySession = null;
}
earlyConnection?.catch(() => undefined); // reported by main.ts, which awaits it

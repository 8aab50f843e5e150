/**
 * Page URL parameters (see web/README.md for the table). Parsing is pure: it returns the
 * parameters and every problem found, and the page shows the problems.
 */

import { MAX_LIVE_FEC, MAX_LIVE_KEEP_MS, forwardedPrefixes, pageParameters } from './contracts';
import { JITTER_ESTIMATORS, TRANSIENT_RULES, type JitterEstimator, type TransientRule } from './watch/live-playout';

export type Mode = 'fixed' | 'abr' | 'live';
/**
 * VOD: the rendition of the first segment. `lowest`: the lowest rendition, requested together
 * with the manifest (index 0: the manifest lists renditions ascending), so the first chunk is
 * small and nothing waits for the manifest; `abr`: the mode's own choice (fixed: the chosen
 * bitrate; abr: the ABR's first decision), requested once the manifest is in.
 */
export type StartRendition = 'lowest' | 'abr';
export const START_RENDITIONS: readonly StartRendition[] = ['lowest', 'abr'];

/**
 * Both VOD modes start `lowest`. In mode=abr that is the ABR's own first choice, minus the
 * manifest round trip. In mode=fixed the first 2 s come at the lowest rung, then the chosen
 * one: on a link just above the bitrate (video-rttflap: 1.1 x) the lowest rung's segment
 * arrives ~10 x faster than it plays, so playback starts with a small first chunk and still
 * has a full segment of cushion, where starting at the chosen bitrate would play from 0.2 s of
 * buffer growing by 0.1 s per second. `pccstream ab` fixed-mode media usually has the one
 * rendition (lowest = the chosen one); on media with more rungs, `startRendition=abr` keeps
 * the chosen rendition from the first segment.
 */
export function defaultStartRendition(mode: Mode): StartRendition {
  return mode === 'live' ? 'abr' : 'lowest';
}

/** mode=live only (see web/README.md, "Live"). */
export interface LiveParams {
  /** `latency`: target latency behind the live edge, ms. */
  targetLatencyMs: number;
  /** `keep`: forwarded as the session parameter `live.keep_ms` (null: the server's default). */
  keepMs: number | null;
  /** `rendition`: a live rendition id or index (null: by `bitrate`, else the default rule). */
  rendition: string | null;
  /** `abr=1`: live ABR (src/watch/live-abr.ts) chooses the rendition; `bitrate` caps the ladder. */
  abr: boolean;
  /**
   * `fec=K`: groups as datagrams with one parity fragment per K data fragments (0: NACKs only),
   * or `fec=auto`: as much parity as the connection's loss rate asks for (at most one per
   * AUTO_FEC_MAX_K, and that while the connection is new), one per chunk on a path that has not
   * lost for 30 s (shared/PROTOCOL.md); forwarded as the session parameter
   * `live.fec`. `fec=streams`: groups on streams, nothing forwarded. Absent (not null, so parsed
   * parameters without it compare equal to the contract's vectors): DEFAULT_LIVE_FEC.
   */
  fec?: LiveFec;
  /**
   * `jitter`: how the playout delay's jitter term is estimated (src/watch/live-playout.ts):
   * `sd`, the standard deviation of the recent groups' largest delays, or `diff`, from their
   * successive differences. Absent (as `fec`): `sd`.
   */
  jitter?: JitterEstimator;
  /**
   * `transient`: whether the delays of the first groups after the join or a switch up count as
   * any others (`hold`) or stop counting once a later group is in (`drop`;
   * src/watch/live-playout.ts). Absent: `drop` (docs/live.md, sessions 28–29).
   */
  transient?: TransientRule;
}

export type LiveFec = number | 'auto' | 'streams';
/**
 * Live groups as datagrams with parity that follows the loss unless the page says otherwise:
 * in the paired campaigns of docs/results/live (s27c–s29d) it stalled on one of 27
 * video-rttflap blocks (a loss after parity had gone off, which it no longer does), where
 * streams wait a round trip per lost packet and stalled on 5 of 12 in session 29 alone.
 */
export const DEFAULT_LIVE_FEC: LiveFec = 'auto';

/** The session's `live.fec` for these parameters: null for groups on streams. */
export function sessionLiveFec(live: LiveParams): number | 'auto' | null {
  const fec = live.fec ?? DEFAULT_LIVE_FEC;
  return fec === 'streams' ? null : fec;
}

export interface PlayerParams {
  /** WebTransport URL to dial instead of /api/config's `webtransport_url` (e.g. an emulator). */
  server: string | null;
  /** SHA-256 of the server's DER certificate, replacing /api/config's `certificate_sha256`. */
  certHash: Uint8Array | null;
  mode: Mode;
  /** mode=fixed: requested bitrate in kbit/s. */
  bitrateKbps: number | null;
  /** Buffer target in seconds: the player requests the next segment while the buffer ahead is below it. */
  bufferS: number;
  autoplay: boolean;
  /**
   * `prefetch` (mode=fixed; default 1): request the next segment as soon as the current one
   * is requested, so the link never idles for a request's round trip between segments (the
   * server sends older segments first).
   */
  prefetch: boolean;
  /** `startRendition` (VOD): see StartRendition; parseParams always sets it (absent means
   * defaultStartRendition(mode), for params built by hand, e.g. live tests). */
  startRendition?: StartRendition;
  /** `cc`, `cc.*` and `test.*` parameters, in page order, forwarded to the WebTransport URL. */
  forwarded: [string, string][];
  /** Present with mode=live. */
  live?: LiveParams;
}

export const DEFAULT_BUFFER_S = 10;
export const MAX_BUFFER_S = 600;
export const DEFAULT_LIVE_LATENCY_MS = 1000;
export const MAX_LIVE_LATENCY_MS = 60_000;
export { MAX_LIVE_FEC, MAX_LIVE_KEEP_MS };
const LIVE_ONLY = ['latency', 'keep', 'fec', 'jitter', 'transient', 'rendition', 'abr'] as const;

export interface ParsedParams {
  params: PlayerParams;
  /** Fatal: the page shows them and does not play. */
  errors: string[];
  /** Shown, not fatal (e.g. an unknown parameter, which may be a typo). */
  warnings: string[];
}

/** `cc`, `cc.NAME` and `test.NAME` go to the server as session parameters. */
export function isForwardedParam(name: string): boolean {
  return name === 'cc' || forwardedPrefixes('player').some((prefix) => name.startsWith(prefix));
}

// shared/contracts/player.json. `dashboard`, `replay`, `origin`, `window`, `compact`: the
// dashboard's (src/dashboard/index.ts); `telemetry` (json | deflate, default deflate): the
// telemetry stream's encoding.
const KNOWN = pageParameters('player');

/** Parse a hex SHA-256 (64 hex digits; ':' and whitespace separators allowed). */
export function parseSha256Hex(text: string): Uint8Array | null {
  const hex = text.replace(/[\s:]/g, '');
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Parameter `name` if it is one of `choices`; null when absent, or wrong (then one line in `errors`). */
function oneOf<T extends string>(query: URLSearchParams, name: string, choices: readonly T[], errors: string[]): T | null {
  const value = query.get(name);
  if (value === null) return null;
  if ((choices as readonly string[]).includes(value)) return value as T;
  errors.push(`${name}: expected ${choices.join(' or ')}, got ${JSON.stringify(value)}`);
  return null;
}

function parsePositiveNumber(text: string): number | null {
  if (!/^\s*\d+(\.\d+)?\s*$/.test(text)) return null;
  const value = Number(text);
  return Number.isFinite(value) && value > 0 ? value : null;
}

export function parseParams(search: string | URLSearchParams): ParsedParams {
  const query = typeof search === 'string' ? new URLSearchParams(search) : search;
  const errors: string[] = [];
  const warnings: string[] = [];
  const params: PlayerParams = {
    server: null,
    certHash: null,
    mode: 'abr',
    bitrateKbps: null,
    bufferS: DEFAULT_BUFFER_S,
    autoplay: true,
    prefetch: false,
    forwarded: [],
  };

  for (const [name, value] of query) {
    if (isForwardedParam(name)) {
      if (name === 'cc' && value === '') errors.push('cc: empty controller name');
      else if (name.endsWith('.')) errors.push(`${name}: empty parameter name`);
      else params.forwarded.push([name, value]);
    } else if (!KNOWN.has(name)) {
      warnings.push(`unknown URL parameter "${name}" ignored`);
    }
  }

  const server = query.get('server');
  if (server !== null) {
    let url: URL | null = null;
    try {
      url = new URL(server);
    } catch {
      url = null;
    }
    if (url === null || url.protocol !== 'https:') {
      errors.push(`server: expected an https:// WebTransport URL, got ${JSON.stringify(server)}`);
    } else {
      params.server = url.href;
    }
  }

  const certHash = query.get('certHash');
  if (certHash !== null) {
    params.certHash = parseSha256Hex(certHash);
    if (params.certHash === null) {
      errors.push('certHash: expected the SHA-256 of the certificate as 64 hex digits');
    }
  }

  const bitrate = query.get('bitrate');
  if (bitrate !== null) {
    params.bitrateKbps = parsePositiveNumber(bitrate);
    if (params.bitrateKbps === null) errors.push(`bitrate: expected kbit/s > 0, got ${JSON.stringify(bitrate)}`);
  }

  const mode = query.get('mode');
  if (mode === null) {
    // Convenience: a bitrate alone means a fixed rendition.
    params.mode = bitrate !== null ? 'fixed' : 'abr';
  } else if (mode === 'fixed' || mode === 'abr') {
    params.mode = mode;
  } else if (mode === 'live') {
    params.mode = 'live';
    params.live = parseLiveParams(query, errors);
    const keep = params.live.keepMs;
    if (keep !== null) params.forwarded.push(['live.keep_ms', String(keep)]);
    const fec = sessionLiveFec(params.live);
    if (fec !== null) params.forwarded.push(['live.fec', String(fec)]);
    if (bitrate !== null && query.get('rendition') !== null) errors.push('give rendition or bitrate, not both');
    if (params.live.abr && query.get('rendition') !== null) errors.push('rendition fixes the live rendition; with abr=1 give bitrate (the ladder cap) instead');
  } else {
    errors.push(`mode: unknown mode ${JSON.stringify(mode)} (expected fixed, abr or live)`);
  }
  if (params.mode !== 'live') {
    for (const name of LIVE_ONLY) if (query.get(name) !== null) errors.push(`${name} only applies to mode=live`);
  }
  if (params.mode === 'fixed' && bitrate === null && mode === 'fixed') {
    errors.push('mode=fixed needs bitrate=KBPS');
  }
  if (params.mode === 'abr' && bitrate !== null && mode === 'abr') {
    errors.push('bitrate only applies to mode=fixed or mode=live');
  }

  const buffer = query.get('buffer');
  if (buffer !== null) {
    const value = parsePositiveNumber(buffer);
    if (value === null || value > MAX_BUFFER_S) {
      errors.push(`buffer: expected seconds in (0, ${MAX_BUFFER_S}], got ${JSON.stringify(buffer)}`);
    } else {
      params.bufferS = value;
    }
  }

  if (params.mode === 'live' && buffer !== null) warnings.push('buffer does not apply to mode=live (its buffer is set by latency) and is ignored');

  const prefetch = query.get('prefetch');
  params.prefetch = params.mode === 'fixed';
  if (prefetch !== null) {
    if (prefetch === '1' || prefetch === 'true') params.prefetch = true;
    else if (prefetch === '0' || prefetch === 'false') params.prefetch = false;
    else errors.push(`prefetch: expected 1 or 0, got ${JSON.stringify(prefetch)}`);
    // ABR picks each rendition from the throughput of the segment before it, which a
    // pipelined request would measure while queued behind that segment.
    if (params.prefetch && params.mode !== 'fixed') errors.push('prefetch only applies to mode=fixed');
  }

  params.startRendition = defaultStartRendition(params.mode);
  const start = query.get('startRendition');
  if (start !== null) {
    const value = START_RENDITIONS.find((name) => name === start);
    if (value === undefined) errors.push(`startRendition: expected ${START_RENDITIONS.join(' or ')}, got ${JSON.stringify(start)}`);
    else if (params.mode === 'live') errors.push('startRendition only applies to mode=fixed or mode=abr');
    else params.startRendition = value;
  }

  const autoplay = query.get('autoplay');
  if (autoplay !== null) {
    if (autoplay === '1' || autoplay === 'true') params.autoplay = true;
    else if (autoplay === '0' || autoplay === 'false') params.autoplay = false;
    else errors.push(`autoplay: expected 1 or 0, got ${JSON.stringify(autoplay)}`);
  }

  return { params, errors, warnings };
}

function parseLiveParams(query: URLSearchParams, errors: string[]): LiveParams {
  const live: LiveParams = { targetLatencyMs: DEFAULT_LIVE_LATENCY_MS, keepMs: null, rendition: null, abr: false };
  const latency = query.get('latency');
  if (latency !== null) {
    const value = parsePositiveNumber(latency);
    if (value === null || value > MAX_LIVE_LATENCY_MS) {
      errors.push(`latency: expected the target latency in ms, in (0, ${MAX_LIVE_LATENCY_MS}], got ${JSON.stringify(latency)}`);
    } else {
      live.targetLatencyMs = value;
    }
  }
  const keep = query.get('keep');
  if (keep !== null) {
    const value = /^\d+$/.test(keep.trim()) ? Number(keep) : NaN;
    if (!(value >= 0 && value <= MAX_LIVE_KEEP_MS)) {
      errors.push(`keep: expected whole milliseconds in [0, ${MAX_LIVE_KEEP_MS}], got ${JSON.stringify(keep)}`);
    } else {
      live.keepMs = value;
    }
  }
  const fec = query.get('fec');
  if (fec === 'auto' || fec === 'streams') {
    live.fec = fec;
  } else if (fec !== null) {
    const value = /^\d+$/.test(fec.trim()) ? Number(fec) : NaN;
    if (!(value >= 0 && value <= MAX_LIVE_FEC)) {
      errors.push(`fec: expected data fragments per parity fragment, a whole number in [0, ${MAX_LIVE_FEC}] (0: no parity, NACKs only), auto or streams, got ${JSON.stringify(fec)}`);
    } else {
      live.fec = value;
    }
  }
  const jitter = oneOf(query, 'jitter', JITTER_ESTIMATORS, errors);
  if (jitter !== null) live.jitter = jitter;
  const transient = oneOf(query, 'transient', TRANSIENT_RULES, errors);
  if (transient !== null) live.transient = transient;
  const rendition = query.get('rendition');
  if (rendition !== null) {
    if (rendition.trim() === '') errors.push('rendition: empty (expected a live rendition id or index)');
    else live.rendition = rendition.trim();
  }
  const abr = query.get('abr');
  if (abr !== null) {
    if (abr === '1' || abr === 'true') live.abr = true;
    else if (abr === '0' || abr === 'false') live.abr = false;
    else errors.push(`abr: expected 1 or 0, got ${JSON.stringify(abr)}`);
  }
  return live;
}

/**
 * With `fec`, how long after a newer group began the player waits for a group's missing
 * fragments before giving it up (transport/live-datagrams.ts `keepMs`). `keep` when given: the
 * server stops sending and repairing a group then, so waiting longer gains nothing; else the
 * target latency: a group still missing pieces that long after the next one began would be
 * shown later than the target, and the server's default keep (one group) is not known before
 * LIVE_INFO.
 */
export function liveGiveUpMs(live: LiveParams): number {
  return live.keepMs ?? live.targetLatencyMs;
}

/** The WebTransport URL: `base` plus the forwarded parameters (appended after any already there). */
export function sessionUrl(base: string, forwarded: [string, string][]): string {
  const url = new URL(base);
  for (const [name, value] of forwarded) url.searchParams.append(name, value);
  return url.href;
}

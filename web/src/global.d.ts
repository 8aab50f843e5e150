import type { DashboardSnapshot } from './dashboard';
import type { Metrics } from './metrics/types';
import type { AbrTrace } from './watch/live-abr';
import type { LiveStartState } from './watch/live';
import type { TelemetryRecord } from './protocol/telemetry';
import type { EarlySession } from './transport/early';

export interface PccstreamApi {
  /** Player version. */
  version: string;
  /** Playback metrics (definitions in web/README.md); JSON-serialisable. */
  metrics(): Metrics;
  /** Telemetry records received from the server (the last 20 000, plus `hello`), as plain objects. */
  telemetry(): TelemetryRecord[];
  /** Dashboard state: records taken in by type, points drawn per series (`chart/series`). */
  dashboard(): DashboardSnapshot;
  /** The session's recording as JSON Lines (what the download button saves). */
  recording(): string;
  /** Show or hide the dashboard's charts (hidden: no drawing; data is still recorded). */
  setDashboardVisible(visible: boolean): void;
  /** mode=live&abr=1: live ABR's recorded inputs (chunk arrivals, group ends), else null. */
  liveAbrTrace(): AbrTrace | null;
  /** mode=live: the live edge, target and buffered ranges the start decision sees, else null. */
  liveStart(): LiveStartState | null;
  /** VOD: how many times the session was redialled after it closed (server restart). */
  reconnects(): number;
}

declare global {
  interface Window {
    pccstream: PccstreamApi;
    /** GET /api/config, sent by index.html while the page loads (absent on other pages). */
    pccstreamConfigRequest?: Promise<Response>;
    /** The WebTransport session index.html opened early (VOD autoplay; src/transport/early.ts). */
    pccstreamEarlySession?: Promise<EarlySession | null> | null;
  }
}

import type { Metrics } from './metrics/types';
import type { TelemetryRecord } from './protocol/telemetry';

export interface PccstreamApi {
  /** Player version. */
  version: string;
  /** Playback metrics (definitions in web/README.md); JSON-serialisable. */
  metrics(): Metrics;
  /** Telemetry records received from the server (the last 20 000, plus `hello`), as plain objects. */
  telemetry(): TelemetryRecord[];
}

declare global {
  interface Window {
    pccstream: PccstreamApi;
  }
}

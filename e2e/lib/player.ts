import type { Page } from '@playwright/test';
import { contractUrl } from './contract';

/** The player's `window.pccstream.metrics()` contract (see README). */
export interface PlayerMetrics {
  bufferingRatio: number;
  bufferingRatioWithStartup: number;
  startupDelayMs: number;
  /** ms since the play request per startup step (web/src/metrics/startup.ts). */
  startupPhases: Record<string, number | null>;
  stallCount: number;
  stallSeconds: number;
  playSeconds: number;
  meanBitrateKbps: number;
  bitrateSwitches: number;
  segments: Array<{ index: number; rendition: number; bytes: number; downloadMs: number; throughputKbps: number; bufferAtRequestS: number }>;
  ended: boolean;
  error: string | null;
  droppedFrames: number | null;
  decodedFrames: number | null;
  eventLoopLagP95Ms: number | null;
  eventLoopLagMaxMs: number | null;
}

export async function metrics(page: Page): Promise<PlayerMetrics> {
  return page.evaluate(() => (window as unknown as { pccstream: { metrics(): PlayerMetrics } }).pccstream.metrics());
}

/** Waits until playback ended (or failed), polling the metrics contract. */
export async function playToEnd(page: Page, timeoutMs: number): Promise<PlayerMetrics> {
  await page.waitForFunction(
    () => {
      const api = (window as unknown as { pccstream?: { metrics(): PlayerMetrics } }).pccstream;
      if (!api) return false;
      const m = api.metrics();
      return m.ended || m.error !== null;
    },
    undefined,
    { timeout: timeoutMs, polling: 250 },
  );
  return metrics(page);
}

export function playerUrl(pageUrl: string, params: Record<string, string | number>): string {
  return contractUrl(new URL(pageUrl), 'player', params);
}

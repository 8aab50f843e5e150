import { test, expect, type Page } from '@playwright/test';
import { join } from 'node:path';
import { startEmulator, writeThrottleScenario, type RunningEmulator } from '../lib/emulator';
import { playerUrl } from '../lib/player';
import { DEFAULT_MEDIA, REPO, startServer, type RunningServer } from '../lib/server';

const LIVE_MEDIA = join(REPO, 'media', 'live');
const ONE_WAY_MS = 20;
const TARGET_MS = 1000;
/** Scenario time (s) when the downlink drops below the stream's bitrate (2500k, the default rendition). */
const THROTTLE_AT_S = 16;
const THROTTLED_KBPS = 1500;
const THROTTLED_FOR_S = 12;

/** The live fields of `window.pccstream.metrics()` this test reads (web/README.md). */
interface LiveMetrics {
  mode: string;
  error: string | null;
  state: string;
  currentTime: number;
  startupDelayMs: number | null;
  stallCount: number;
  stallSeconds: number;
  playSeconds: number;
  bufferingRatio: number;
  targetLatencyMs: number | null;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  latencyLastMs: number | null;
  mediaLatencyMs: number | null;
  framesShown: number | null;
  framesSkipped: number | null;
  groupsReceived: number | null;
  groupsDropped: number | null;
  liveSeeks: number | null;
  playbackRate: number;
}

async function liveMetrics(page: Page): Promise<LiveMetrics> {
  return page.evaluate(() => {
    const { segments: _segments, ...m } = (window as unknown as { pccstream: { metrics(): LiveMetrics & { segments: unknown } } }).pccstream.metrics();
    return m;
  });
}

interface Samples {
  /** Glass-to-glass latency of the last frame shown. */
  frame: number[];
  /** The playhead's lag behind the live edge: the age of the picture on screen, frozen or not. */
  playhead: number[];
}

/** Samples the latencies every 250 ms until the emulator's scenario time reaches `untilS`. */
async function sampleUntil(page: Page, emulator: RunningEmulator, untilS: number): Promise<Samples> {
  const out: Samples = { frame: [], playhead: [] };
  while ((performance.now() - emulator.startedAtMs) / 1000 < untilS) {
    const m = await liveMetrics(page);
    if (m.error !== null) break;
    if (m.latencyLastMs !== null) out.frame.push(m.latencyLastMs);
    if (m.mediaLatencyMs !== null) out.playhead.push(m.mediaLatencyMs);
    await page.waitForTimeout(250);
  }
  return out;
}

const max = (xs: number[]): number => xs.reduce((a, b) => Math.max(a, b), -Infinity);

let server: RunningServer;
let emulator: RunningEmulator;

test.beforeAll(async () => {
  server = await startServer({ media: DEFAULT_MEDIA, args: ['--live-media', LIVE_MEDIA] });
  const scenario = writeThrottleScenario({
    name: 'live-throttle',
    oneWayMs: ONE_WAY_MS,
    queue: '150kB',
    rateKbps: 20000,
    throttledKbps: THROTTLED_KBPS,
    atS: THROTTLE_AT_S,
  });
  emulator = await startEmulator(server.info.quic_port, ['--scenario', scenario]);
});

test.afterAll(async () => {
  await emulator?.stop();
  await server?.stop();
});

test('live: plays at the target latency through a 20 ms link; a throttled link costs latency and frames', async ({ page }, testInfo) => {
  test.setTimeout(60_000);
  await page.goto(playerUrl(server.info.page_url, { mode: 'live', latency: TARGET_MS, server: `https://127.0.0.1:${emulator.port}/stream` }));

  // Clean link until the throttle.
  const clean = await sampleUntil(page, emulator, THROTTLE_AT_S - 0.3);
  const before = await liveMetrics(page);
  // Throttled below the stream's bitrate.
  const throttled = await sampleUntil(page, emulator, THROTTLE_AT_S + THROTTLED_FOR_S);
  const after = await liveMetrics(page);

  const figures = {
    clean: { ...before, maxPlayheadLatencyMs: max(clean.playhead) },
    throttled: {
      maxFrameLatencyMs: max(throttled.frame),
      maxPlayheadLatencyMs: max(throttled.playhead),
      bufferingRatio: (after.stallSeconds - before.stallSeconds) / (after.stallSeconds - before.stallSeconds + after.playSeconds - before.playSeconds),
      stallSeconds: after.stallSeconds - before.stallSeconds,
      stalls: after.stallCount - before.stallCount,
      framesShown: (after.framesShown ?? 0) - (before.framesShown ?? 0),
      framesSkipped: (after.framesSkipped ?? 0) - (before.framesSkipped ?? 0),
      groupsDropped: (after.groupsDropped ?? 0) - (before.groupsDropped ?? 0),
      seeks: (after.liveSeeks ?? 0) - (before.liveSeeks ?? 0),
    },
  };
  console.log(`live figures: ${JSON.stringify(figures)}`);
  testInfo.annotations.push({ type: 'figures', description: JSON.stringify(figures) });

  // Clean phase: playing live at about the target latency, which is at least the link's delay.
  expect(before.error).toBeNull();
  expect(before.mode).toBe('live');
  expect(before.targetLatencyMs).toBe(TARGET_MS);
  expect(before.startupDelayMs).not.toBeNull();
  expect(before.framesShown ?? 0).toBeGreaterThan(150);
  expect(before.latencyP50Ms ?? 0).toBeGreaterThanOrEqual(ONE_WAY_MS);
  expect(before.latencyP50Ms ?? Infinity).toBeLessThan(TARGET_MS + 300);
  expect(before.stallSeconds).toBeLessThan(1.5);
  expect(before.stallCount).toBeLessThanOrEqual(3);
  expect(before.groupsDropped ?? Infinity).toBeLessThanOrEqual(1);

  // Throttled: the queue delays what is in flight and playback stalls (the picture on screen
  // ages: latency rises), then superseded groups are dropped and frames skipped to keep the
  // latency of what is shown bounded; playback goes on.
  expect(after.error).toBeNull();
  expect(figures.throttled.maxPlayheadLatencyMs).toBeGreaterThan(max(clean.playhead) + 300);
  expect(figures.throttled.maxFrameLatencyMs).toBeLessThan(TARGET_MS + 3000);
  expect(figures.throttled.groupsDropped).toBeGreaterThan(2);
  expect(figures.throttled.framesSkipped).toBeGreaterThan(30);
  expect(figures.throttled.framesShown).toBeGreaterThan(0);
  expect(after.currentTime - before.currentTime).toBeGreaterThan(THROTTLED_FOR_S / 2);
});

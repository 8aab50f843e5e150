import { test, expect, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MEDIA, REPO, startServer, type RunningServer } from '../lib/server';
import { startEmulator } from '../lib/emulator';
import { playToEnd, playerUrl, type PlayerMetrics } from '../lib/player';

// #17: an outage mid-stream (3 s for VOD, 2 s for live) and a server restart during playback. The player's buffer
// target is small, so either one must show up as a stall; playback then resumes at the segment
// it was fetching, without a reload, and plays to the end.
const manifest = JSON.parse(readFileSync(join(DEFAULT_MEDIA, 'manifest.json'), 'utf8')) as {
  duration_s: number;
  segment_seconds: number;
};
const SEGMENTS = Math.round(manifest.duration_s / manifest.segment_seconds);

let server: RunningServer | null = null;

test.afterEach(async () => {
  await server?.stop();
  server = null;
});

function expectEverySegmentOnce(m: PlayerMetrics): void {
  expect(m.segments.map((s) => s.index)).toEqual([...Array(SEGMENTS).keys()]);
}

/**
 * Honest stalls: each segment that took longer than the media buffered when it was requested
 * ran the buffer dry for the difference (after startup), less what of that segment's own chunks
 * arrived before the gap and played (at most the segment: VOD plays chunk by chunk); no more.
 * A retried request's download time counts from its first attempt, so a reconnect's wait is
 * in it.
 */
function expectHonestStalls(m: PlayerMetrics): void {
  const dry = m.segments.slice(1).map((s) => Math.max(0, s.downloadMs / 1000 - s.bufferAtRequestS));
  expect(m.stallCount).toBeGreaterThanOrEqual(1);
  expect(m.stallSeconds).toBeGreaterThanOrEqual(Math.max(...dry) - manifest.segment_seconds - 0.5);
  expect(m.stallSeconds).toBeLessThanOrEqual(dry.reduce((a, b) => a + b, 0) + 1.5);
}

async function reconnects(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as { pccstream: { reconnects(): number } }).pccstream.reconnects());
}

async function waitForPlayhead(page: Page, seconds: number): Promise<void> {
  await page.waitForFunction((t) => document.querySelector('video')!.currentTime >= t, seconds, { timeout: 60_000, polling: 100 });
}

test('a 3 s outage mid-stream: playback stalls, then resumes without a reload', async ({ page }) => {
  server = await startServer({ cc: 'vivace' });
  // The outage starts 8 s into the emulator's life: a few seconds into playback. The player
  // requests a 2 s segment every 2 s and gets it in ~30 ms, so a 2 s outage can fall almost
  // entirely between two requests (it did once startup got faster); a 3 s one always holds a
  // request for at least 1 s. The live case below keeps the 2 s outage: it streams all along.
  const emulator = await startEmulator(server.info.quic_port, ['--scenario', 'outage-2s', '--param', 'outage_at_s=8', '--param', 'outage_end_s=11']);
  try {
    await page.goto(
      playerUrl(server.info.page_url, {
        server: `https://127.0.0.1:${emulator.port}/stream`,
        mode: 'fixed',
        bitrate: 750,
        buffer: 0.5,
        prefetch: 0,
      }),
    );
    const m = await playToEnd(page, (manifest.duration_s + 60) * 1000);
    const redials = await reconnects(page);
    const downloads = m.segments.map((s) => [s.index, Math.round(s.downloadMs), s.bufferAtRequestS]);
    console.log(`outage run: ${JSON.stringify({ ...m, segments: downloads, reconnects: redials })}`);
    expect(m.error).toBeNull();
    expect(m.ended).toBe(true);
    expectEverySegmentOnce(m);
    expect(Math.abs(m.playSeconds - manifest.duration_s)).toBeLessThanOrEqual(1);
    // The outage held a request (for at least 1 s of its 3 s).
    expect(Math.max(...m.segments.map((s) => s.downloadMs))).toBeGreaterThanOrEqual(1000);
    expectHonestStalls(m);
  } finally {
    await emulator.stop();
  }
});

test('a server restart during playback: the player reconnects and resumes at its segment', async ({ page }) => {
  server = await startServer({ cc: 'cubic' });
  const quicPort = server.info.quic_port;
  await page.goto(playerUrl(server.info.page_url, { mode: 'fixed', bitrate: 750, buffer: 0.5, prefetch: 0 }));
  await waitForPlayhead(page, 6);
  const downAt = Date.now();
  await server.stop(); // SIGTERM: the server closes its sessions
  await new Promise((r) => setTimeout(r, 1500));
  // The same QUIC port and certificate (state dir): the player redials the URL it had.
  server = await startServer({ cc: 'cubic', args: ['--port', String(quicPort)] });
  const upAfterMs = Date.now() - downAt;
  const m = await playToEnd(page, (manifest.duration_s + 60) * 1000);
  const redials = await reconnects(page);
  const downloads = m.segments.map((s) => [s.index, Math.round(s.downloadMs), s.bufferAtRequestS]);
  console.log(`restart run: ${JSON.stringify({ ...m, segments: downloads, reconnects: redials, upAfterMs })}`);
  expect(m.error).toBeNull();
  expect(m.ended).toBe(true);
  expect(redials).toBeGreaterThanOrEqual(1);
  expectEverySegmentOnce(m);
  expect(Math.abs(m.playSeconds - manifest.duration_s)).toBeLessThanOrEqual(1);
  // The segment fetched across the restart waited for the new server.
  expect(Math.max(...m.segments.map((s) => s.downloadMs))).toBeGreaterThanOrEqual(upAfterMs - 2500);
  expectHonestStalls(m);
});

// Live (web/src/watch/live-reconnect.ts): after an outage or a lost session the player rejoins
// the live edge without a reload; the time the playhead had nothing to play is a stall.
const LIVE_MEDIA = join(REPO, 'media', 'live');
const LIVE_TARGET_MS = 1000;

interface LiveFigures {
  error: string | null;
  currentTime: number;
  stallCount: number;
  stallSeconds: number;
  playSeconds: number;
  mediaLatencyMs: number | null;
  groupsDropped: number | null;
  liveSeeks: number | null;
}

async function liveFigures(page: Page): Promise<LiveFigures & { reconnects: number }> {
  return page.evaluate(() => {
    const api = (window as unknown as { pccstream: { metrics(): LiveFigures; reconnects(): number } }).pccstream;
    const m = api.metrics();
    return {
      error: m.error,
      currentTime: m.currentTime,
      stallCount: m.stallCount,
      stallSeconds: m.stallSeconds,
      playSeconds: m.playSeconds,
      mediaLatencyMs: m.mediaLatencyMs,
      groupsDropped: m.groupsDropped,
      liveSeeks: m.liveSeeks,
      reconnects: api.reconnects(),
    };
  });
}

/** The largest playhead latency seen while polling every 200 ms for `ms`. */
async function watchLive(page: Page, ms: number): Promise<number> {
  let worst = 0;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const m = await liveFigures(page);
    if (m.error !== null) break;
    worst = Math.max(worst, m.mediaLatencyMs ?? 0);
    await page.waitForTimeout(200);
  }
  return worst;
}

test('live: a 2 s outage stalls playback, which then goes on at the live edge without a reload', async ({ page }) => {
  test.setTimeout(90_000);
  // cubic: this case is about the player; the controllers' recovery is the soak's outage part.
  server = await startServer({ cc: 'cubic', args: ['--live-media', LIVE_MEDIA] });
  const emulator = await startEmulator(server.info.quic_port, ['--scenario', 'outage-2s', '--param', 'outage_at_s=10', '--param', 'outage_end_s=12']);
  try {
    await page.goto(playerUrl(server.info.page_url, { mode: 'live', latency: LIVE_TARGET_MS, server: `https://127.0.0.1:${emulator.port}/stream` }));
    const sinceStart = (): number => performance.now() - emulator.startedAtMs;
    await page.waitForTimeout(Math.max(0, 9500 - sinceStart()));
    const before = await liveFigures(page);
    const worst = await watchLive(page, 21_000 - sinceStart());
    const after = await liveFigures(page);
    const stalled = after.stallSeconds - before.stallSeconds;
    console.log(`live outage run: ${JSON.stringify({ before, after, stalled, worstLatencyMs: worst })}`);
    expect(before.error).toBeNull();
    expect(before.playSeconds).toBeGreaterThan(3);
    expect(after.error).toBeNull();
    // The playhead ran dry for the outage less what it had buffered (about the target
    // latency). After the link's return playback goes on, but (session 7, loaded 2-core
    // machine) in short stalls and skips for several seconds while the flow regains its rate:
    // 5-7 s of stall in the 11.5 s watched, every one counted.
    expect(after.stallCount).toBeGreaterThan(before.stallCount);
    expect(stalled).toBeGreaterThanOrEqual(2 - (before.mediaLatencyMs ?? LIVE_TARGET_MS) / 1000 - 0.3);
    expect(stalled + (after.playSeconds - before.playSeconds)).toBeLessThanOrEqual(21 - 9.5 + 0.5);
    // Playing again by the end, near the target: the outage's groups were skipped, not queued.
    expect(after.playSeconds - before.playSeconds).toBeGreaterThan(1);
    expect(after.mediaLatencyMs ?? Infinity).toBeLessThan(LIVE_TARGET_MS + 1000);
    expect(worst).toBeGreaterThan(2000 - 300);
  } finally {
    await emulator.stop();
  }
});

// The browser may hold the last frame with about a frame still buffered while the server is
// gone: the frozen-playhead rule (metrics/playback.ts) counts that downtime as the stall it is.
test('live: a server restart: the player reconnects and rejoins the new live edge', async ({ page }) => {
  test.setTimeout(90_000);
  server = await startServer({ cc: 'cubic', args: ['--live-media', LIVE_MEDIA] });
  const quicPort = server.info.quic_port;
  await page.goto(playerUrl(server.info.page_url, { mode: 'live', latency: LIVE_TARGET_MS }));
  await page.waitForFunction(() => document.querySelector('video')!.currentTime > 0, undefined, { timeout: 30_000 });
  await page.waitForTimeout(4000);
  const before = await liveFigures(page);
  const downAt = Date.now();
  await server.stop(); // SIGTERM: the server closes its sessions
  await new Promise((r) => setTimeout(r, 1500));
  server = await startServer({ cc: 'cubic', args: ['--live-media', LIVE_MEDIA, '--port', String(quicPort)] });
  const upAfterS = (Date.now() - downAt) / 1000;
  await page.waitForFunction(
    (played) => {
      const m = (window as unknown as { pccstream: { metrics(): { playSeconds: number; error: string | null } } }).pccstream.metrics();
      return m.error !== null || m.playSeconds > played + 4;
    },
    before.playSeconds,
    { timeout: 40_000, polling: 200 },
  );
  const after = await liveFigures(page);
  const stalled = after.stallSeconds - before.stallSeconds;
  console.log(`live restart run: ${JSON.stringify({ before, after, stalled, upAfterS })}`);
  expect(after.error).toBeNull();
  expect(after.reconnects).toBeGreaterThanOrEqual(1);
  // Nothing to play from about the target latency after the server went down until the new
  // session's first group: counted as a stall, not hidden by the rejoin's seek.
  expect(after.stallCount).toBeGreaterThan(before.stallCount);
  expect(stalled).toBeGreaterThanOrEqual(upAfterS - (before.mediaLatencyMs ?? LIVE_TARGET_MS) / 1000 - 0.5);
  expect(stalled).toBeLessThanOrEqual(upAfterS + 6);
  expect(after.mediaLatencyMs ?? Infinity).toBeLessThan(LIVE_TARGET_MS + 1000);
});

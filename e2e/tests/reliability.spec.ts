import { test, expect, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MEDIA, startServer, type RunningServer } from '../lib/server';
import { startEmulator } from '../lib/emulator';
import { playToEnd, playerUrl, type PlayerMetrics } from '../lib/player';

// #17: a 2 s outage mid-stream and a server restart during playback. The player's buffer
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

test('a 2 s outage mid-stream: playback stalls, then resumes without a reload', async ({ page }) => {
  server = await startServer({ cc: 'vivace' });
  // The outage starts 8 s into the emulator's life: a few seconds into playback.
  const emulator = await startEmulator(server.info.quic_port, ['--scenario', 'outage-2s', '--param', 'outage_at_s=8', '--param', 'outage_end_s=10']);
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
    // The outage hit a download in flight (it took the 2 s at least).
    expect(Math.max(...m.segments.map((s) => s.downloadMs))).toBeGreaterThanOrEqual(2000);
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

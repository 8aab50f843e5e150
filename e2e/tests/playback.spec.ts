import { test, expect } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MEDIA, startServer, type RunningServer } from '../lib/server';
import { playToEnd, playerUrl } from '../lib/player';

const manifest = JSON.parse(readFileSync(join(DEFAULT_MEDIA, 'manifest.json'), 'utf8')) as { duration_s: number };

let server: RunningServer;

test.beforeAll(async () => {
  server = await startServer({ cc: 'vivace', args: ['--enable-test-hooks'] });
});

test.afterAll(async () => {
  const output = await server.stop();
  console.log(output.split('\n').filter((line) => line.includes('peak RSS')).join('\n'));
});

test('plays the whole stream over WebTransport to the end', async ({ page }, testInfo) => {
  expect(manifest.duration_s).toBeGreaterThanOrEqual(20);
  await page.goto(playerUrl(server.info.page_url, { mode: 'fixed', bitrate: 1500 }));
  const m = await playToEnd(page, (manifest.duration_s + 60) * 1000);
  const peak = server.peakRssMiB();
  console.log(`clean run: ${JSON.stringify({ ...m, segments: m.segments.length, serverPeakRssMiB: peak })}`);
  testInfo.annotations.push({ type: 'figures', description: JSON.stringify({ startupDelayMs: m.startupDelayMs, firstFrameMs: m.startupPhases['firstFrameMs'], bufferingRatio: m.bufferingRatio, serverPeakRssMiB: peak }) });
  expect(m.error).toBeNull();
  expect(m.ended).toBe(true);
  expect(m.startupDelayMs).toBeGreaterThan(0);
  // Chunked VOD: playback starts on the first 0.2 s CMAF chunk, not after a whole 2 s segment.
  expect(m.startupDelayMs).toBeLessThan(2000);
  // Where startup went: every step recorded, in the order they must happen.
  const p = m.startupPhases;
  // The first segment and its init are asked for by the CONNECT itself (vod.first): their
  // request is sent with the session, and their first byte comes after it is ready.
  const chain = ['sessionStartMs', 'requestSentMs', 'sessionReadyMs', 'firstByteMs', 'initAppendedMs', 'firstChunkAppendedMs'];
  for (const step of [...chain, 'firstFrameMs', 'scriptStartMs', 'configReadyMs', 'mediaSourceOpenMs']) expect(p[step], step).toEqual(expect.any(Number));
  const times = chain.map((step) => p[step] ?? Number.NaN);
  expect(times).toEqual([...times].sort((a, b) => a - b));
  expect(p['requestSentMs']).toBe(p['sessionStartMs']);
  // The first frame can be shown before the append's completion reaches the page's script.
  expect(p['firstFrameMs']).toBeGreaterThan(p['firstByteMs'] ?? Number.NaN);
  // The two clocks of one event: the compositor's presentation time and the playhead's
  // advance. How far apart they land depends on the host's load (the first frame came 133 ms
  // after the playhead moved in one CI run on two cores), so the test pins only that they
  // describe the same start; both are recorded in the figures above.
  expect(p['firstFrameMs']).toBeLessThanOrEqual(m.startupDelayMs + 1000);
  expect(Math.abs(m.playSeconds - manifest.duration_s)).toBeLessThanOrEqual(1);
  expect(m.segments.length).toBeGreaterThan(0);
  // CPU health: frames counted by the element, the main-thread lag probe ran after startup.
  expect(m.decodedFrames).toBeGreaterThan(0);
  expect(m.droppedFrames).toBeGreaterThanOrEqual(0);
  expect(m.eventLoopLagP95Ms).not.toBeNull();
  expect(m.eventLoopLagMaxMs).toBeGreaterThanOrEqual(m.eventLoopLagP95Ms ?? 0);
  expect(m.bufferingRatioWithStartup).toBeGreaterThan(m.bufferingRatio);
  await page.screenshot({ path: testInfo.outputPath('clean-run.png') });
});

test('a 3 s server-side withhold shows up as a stall', async ({ page }) => {
  // A 0.3 s buffer target keeps the player at the edge: a 3 s withhold must stall it ≈ 2.8 s.
  // No prefetch: a segment requested ahead would put up to one more segment between the
  // playhead and the withheld one.
  await page.goto(
    playerUrl(server.info.page_url, {
      cc: 'cubic',
      mode: 'fixed',
      bitrate: 750,
      buffer: 0.3,
      prefetch: 0,
      'test.withhold_at': 5,
      'test.withhold_s': 3,
    }),
  );
  const m = await playToEnd(page, (manifest.duration_s + 60) * 1000);
  console.log(`withheld run: ${JSON.stringify({ ...m, segments: m.segments.length })}`);
  expect(m.error).toBeNull();
  expect(m.ended).toBe(true);
  expect(m.stallSeconds).toBeGreaterThanOrEqual(2.5);
  expect(m.stallSeconds).toBeLessThan(4.5); // the withhold, not some other cause
  expect(m.stallCount).toBeGreaterThanOrEqual(1);
  expect(m.bufferingRatio).toBeGreaterThan(0);
});

test('a bad page parameter is reported, not a crash', async ({ page }) => {
  await page.goto(playerUrl(server.info.page_url, { mode: 'fixed', bitrate: 1 }));
  const m = await playToEnd(page, 20_000);
  expect(m.error).not.toBeNull();
  await expect(page.locator('body')).toContainText(/bitrate/i);
});

import { test, expect, type Page } from '@playwright/test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { armUrl, startDemo, type RunningDemo } from '../lib/demo';

// One `pccstream demo --cc A,B` serves every test here: the server, and an emulator per arm
// running the same scenario (12 Mbit/s, 30 ms base RTT) with the same seed.
const SCENARIO = 'const-12mbps-30ms-1bdp';
const BASE_RTT_MS = 30;

type Rec = Record<string, unknown> & { type: string };
interface Snapshot {
  visible: boolean;
  mode: string;
  records: Record<string, number>;
  points: Record<string, number>;
  renders: number;
}
interface Api {
  metrics(): { playSeconds: number; error: string | null; stallCount: number };
  telemetry(): Rec[];
  dashboard(): Snapshot;
  recording(): string;
}

let demo: RunningDemo;

test.beforeAll(async () => {
  demo = await startDemo(['--cc', 'vivace,cubic', '--scenario', SCENARIO, '--seed', '7']);
});

test.afterAll(async () => {
  const output = await demo.stop();
  console.log(output.split('\n').filter((l) => l.includes('peak RSS')).join('\n'));
});

async function waitForPlay(page: Page, seconds: number, timeoutMs = 60_000): Promise<void> {
  await page.waitForFunction(
    (s) => {
      const api = (window as unknown as { pccstream?: Api }).pccstream;
      if (!api) return false;
      const m = api.metrics();
      if (m.error !== null) throw new Error(m.error);
      return m.playSeconds >= s;
    },
    seconds,
    { timeout: timeoutMs, polling: 250 },
  );
}

const num = (v: unknown): number => (typeof v === 'number' ? v : NaN);

test('live dashboard: every series has plausible points after 10 s of play; replay draws the same', async ({ page }, testInfo) => {
  await page.goto(armUrl(demo.info, 0, { buffer: 10 }));
  await waitForPlay(page, 10);
  // Let the dashboard draw at least once more, then take recording and points in one go.
  await page.waitForTimeout(300);
  const { telemetry, snapshot, jsonl } = await page.evaluate(() => {
    const api = (window as unknown as { pccstream: Api }).pccstream;
    return { telemetry: api.telemetry(), snapshot: api.dashboard(), jsonl: api.recording() };
  });
  await page.screenshot({ path: testInfo.outputPath('dashboard-live.png'), fullPage: true });

  // Every series has data (live ABR's switch points only come with mode=live&abr=1).
  const empty = Object.entries(snapshot.points)
    .filter(([k, n]) => n === 0 && !k.startsWith('player/ABR switch'))
    .map(([k]) => k);
  console.log(`points: ${JSON.stringify(snapshot.points)}`);
  expect(empty, `series without points: ${empty.join(', ')}`).toEqual([]);
  expect(snapshot.visible).toBe(true);
  expect(snapshot.renders).toBeGreaterThan(50); // ≥ 10 Hz over ≥ 10 s

  // Plausible values.
  expect(telemetry[0]?.type).toBe('hello');
  const samples = telemetry.filter((r) => r.type === 'sample');
  const mis = telemetry.filter((r) => r.type === 'mi');
  const links = telemetry.filter((r) => r.type === 'link');
  expect(samples.length).toBeGreaterThanOrEqual(90); // ≥ 10 Hz for ≥ 10 s
  expect(Math.max(...samples.map((r) => num(r['pacing_rate_bps'])))).toBeGreaterThan(0);
  expect(Math.max(...samples.map((r) => num(r['delivery_rate_bps'])))).toBeGreaterThan(0);
  expect(Math.max(...mis.map((r) => num(r['send_rate_bps'])))).toBeGreaterThan(0);
  const utilities = mis.map((r) => r['utility']).filter((u) => u !== null);
  expect(utilities.length).toBeGreaterThan(0);
  for (const u of utilities) expect(Number.isFinite(u)).toBe(true);
  expect(links.length).toBeGreaterThan(0);
  expect(num(links.at(-1)!['base_rtt_ms'])).toBeCloseTo(BASE_RTT_MS, 3);
  expect(num(links.at(-1)!['capacity_bps'])).toBeGreaterThan(11e6);
  const rtts = samples.map((r) => num(r['min_rtt_ms'])).filter((v) => v > 0);
  expect(rtts.length).toBeGreaterThan(0);
  for (const v of rtts) expect(v).toBeGreaterThanOrEqual(BASE_RTT_MS);
  for (const r of mis) if (num(r['rtt_ms']) > 0) expect(num(r['rtt_ms'])).toBeGreaterThanOrEqual(BASE_RTT_MS);

  // Telemetry overhead, from the server's own byte counters.
  const sessions = (await (await fetch(`${demo.info.page_url}api/sessions`)).json()) as Array<{ cc: string; media_bytes: number; telemetry_bytes: number; telemetry_overhead: number; closed: boolean }>;
  const mine = sessions.filter((s) => s.cc === 'vivace' && !s.closed).at(-1)!;
  console.log(`telemetry overhead: ${JSON.stringify(mine)}`);
  testInfo.annotations.push({ type: 'telemetry-overhead', description: JSON.stringify(mine) });
  expect(mine.telemetry_overhead).toBeLessThanOrEqual(0.02);

  // Replay: the recording, served by the demo at /recordings/, draws the same points.
  const name = 'e2e-live.jsonl';
  writeFileSync(join(demo.recordingsDir, name), jsonl);
  writeFileSync(testInfo.outputPath(name), jsonl);
  const replayPage = await page.context().newPage();
  await replayPage.goto(`${demo.info.page_url}?replay=/recordings/${name}`);
  await replayPage.waitForFunction(() => (window as unknown as { pccstream?: Api }).pccstream?.dashboard().mode === 'replay');
  const replayed = await replayPage.evaluate(() => (window as unknown as { pccstream: Api }).pccstream.dashboard());
  expect(replayed.points).toEqual(snapshot.points);
  await replayPage.screenshot({ path: testInfo.outputPath('dashboard-replay.png'), fullPage: true });
  await replayPage.close();
});

test('compare view: two sessions play side by side with their dashboards', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.goto(demo.info.url);
  expect(demo.info.url).toContain('compare.html');
  await expect.poll(() => page.frames().filter((f) => f.name().startsWith('side-')).length).toBe(2);
  const sides = page.frames().filter((f) => f.name().startsWith('side-'));
  for (const frame of sides) {
    await frame.waitForFunction(
      () => {
        const api = (window as unknown as { pccstream?: Api }).pccstream;
        if (!api) return false;
        const m = api.metrics();
        if (m.error !== null) throw new Error(m.error);
        return m.playSeconds >= 3;
      },
      undefined,
      { timeout: 60_000, polling: 250 },
    );
  }
  const ccs = await Promise.all(
    sides.map((f) => f.evaluate(() => (window as unknown as { pccstream: Api }).pccstream.telemetry()[0]?.['cc'])),
  );
  expect(ccs.sort()).toEqual(['cubic', 'vivace']);
  const playing = await Promise.all(sides.map((f) => f.evaluate(() => !(document.querySelector('#video') as HTMLVideoElement).paused)));
  expect(playing).toEqual([true, true]);
  await page.screenshot({ path: testInfo.outputPath('compare.png') });
});

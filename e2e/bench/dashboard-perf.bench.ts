import { test, type Browser, type Page } from '@playwright/test';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { armUrl, startDemo } from '../lib/demo';
import { REPO } from '../lib/server';

/**
 * Dashboard cost: two sessions at once, same media, same fixed rendition, each through its
 * own emulator (same scenario and seed): one page with the dashboard shown (drawing at
 * 10 Hz), one with it hidden (`dashboard=0`). Running them side by side gives both the same
 * CPU contention. Reports dropped frames (getVideoPlaybackQuality) of each and the JS heap
 * (CDP Runtime.getHeapUsage) every 10 s, as JSON.
 */

const SECONDS = Number(process.env['PCCSTREAM_BENCH_SECONDS'] ?? 600);
const MEDIA = process.env['PCCSTREAM_BENCH_MEDIA'] ?? join(REPO, '.cache', 'media-bench-600');
const BITRATE = Number(process.env['PCCSTREAM_BENCH_BITRATE'] ?? 1500);
const SCENARIO = process.env['PCCSTREAM_BENCH_SCENARIO'] ?? 'const-12mbps-30ms-10bdp';
const HEAP_EVERY_S = 10;

interface Quality {
  dropped: number;
  total: number;
  playSeconds: number;
  stallSeconds: number;
  stallCount: number;
  startupDelayMs: number | null;
  renderMs: number;
  renderMsMax: number;
  visibility: string;
  renders: number;
  telemetry: number;
}

async function quality(page: Page): Promise<Quality> {
  return page.evaluate(() => {
    const v = document.querySelector('#video') as HTMLVideoElement;
    const q = v.getVideoPlaybackQuality();
    const api = (
      window as unknown as {
        pccstream: {
          metrics(): { playSeconds: number; stallSeconds: number; stallCount: number; startupDelayMs: number | null };
          dashboard(): { renders: number; renderMs: number; renderMsMax: number; records: Record<string, number> };
        };
      }
    ).pccstream;
    const m = api.metrics();
    const d = api.dashboard();
    return {
      dropped: q.droppedVideoFrames,
      total: q.totalVideoFrames,
      playSeconds: m.playSeconds,
      stallSeconds: m.stallSeconds,
      stallCount: m.stallCount,
      startupDelayMs: m.startupDelayMs,
      renderMs: d.renderMs,
      renderMsMax: d.renderMsMax,
      visibility: document.visibilityState,
      renders: d.renders,
      telemetry: Object.values(d.records).reduce((a, b) => a + b, 0),
    };
  });
}

async function open(browser: Browser, url: string): Promise<{ page: Page; heap: () => Promise<number> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1400 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await page.goto(url);
  return {
    page,
    heap: async () => {
      const usage = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
      return usage.usedSize;
    },
  };
}

test('dashboard shown vs hidden: dropped frames and JS heap', async ({ browser }, testInfo) => {
  if (!existsSync(join(MEDIA, 'manifest.json'))) {
    throw new Error(`no media at ${MEDIA}: run .venv/bin/pccstream media synth --out ${MEDIA} --duration 600 --ladder 300k,750k,1500k`);
  }
  const demo = await startDemo(['--cc', 'vivace,vivace', '--scenario', SCENARIO, '--media', MEDIA]);
  try {
    const params = { mode: 'fixed', bitrate: BITRATE, buffer: 10 };
    // PCCSTREAM_BENCH_SWAP=1 puts the shown page on the second emulator (rules out the arm).
    const swap = process.env['PCCSTREAM_BENCH_SWAP'] === '1';
    const shown = await open(browser, armUrl(demo.info, swap ? 1 : 0, params));
    const hidden = await open(browser, armUrl(demo.info, swap ? 0 : 1, { ...params, dashboard: 0 }));
    const heap: Array<{ t_s: number; shown_mib: number; hidden_mib: number }> = [];
    const start = Date.now();
    for (let t = 0; t <= SECONDS; t += HEAP_EVERY_S) {
      const wait = start + t * 1000 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      // Collect garbage first, so the figure is what is retained, not what awaits collection.
      for (const p of [shown.page, hidden.page]) {
        const cdp = await p.context().newCDPSession(p);
        await cdp.send('HeapProfiler.collectGarbage');
        await cdp.detach();
      }
      heap.push({ t_s: t, shown_mib: (await shown.heap()) / 2 ** 20, hidden_mib: (await hidden.heap()) / 2 ** 20 });
    }
    const sessions = (await (await fetch(`${demo.info.page_url}api/sessions`)).json()) as Array<Record<string, unknown>>;
    const qs = await quality(shown.page);
    const qh = await quality(hidden.page);
    const pct = (q: Quality): number => (q.total > 0 ? (100 * q.dropped) / q.total : NaN);
    const firstMin = heap.filter((h) => h.t_s >= 60 && h.t_s <= 120);
    const lastMin = heap.filter((h) => h.t_s >= SECONDS - 60);
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const result = {
      seconds: SECONDS,
      swapped_arms: swap,
      bitrate_kbps: BITRATE,
      scenario: SCENARIO,
      shown: { ...qs, dropped_pct: pct(qs) },
      hidden: { ...qh, dropped_pct: pct(qh) },
      dropped_pct_difference: pct(qs) - pct(qh),
      heap_mib: {
        shown_max: Math.max(...heap.map((h) => h.shown_mib)),
        hidden_max: Math.max(...heap.map((h) => h.hidden_mib)),
        shown_minute_2: mean(firstMin.map((h) => h.shown_mib)),
        shown_last_minute: mean(lastMin.map((h) => h.shown_mib)),
      },
      telemetry_overhead: sessions.map((s) => ({
        cc: s['cc'],
        media_bytes: s['media_bytes'],
        telemetry_bytes: s['telemetry_bytes'],
        telemetry_frame_bytes: s['telemetry_frame_bytes'],
        telemetry_overhead: s['telemetry_overhead'],
      })),
      heap_timeline: heap,
    };
    const json = JSON.stringify(result, null, 2);
    console.log(json);
    writeFileSync(testInfo.outputPath('dashboard-perf.json'), json);
    await shown.page.screenshot({ path: testInfo.outputPath('dashboard-perf-shown.png'), fullPage: true });
    for (const [name, p] of [['shown', shown.page], ['hidden', hidden.page]] as const) {
      const jsonl = await p.evaluate(() => (window as unknown as { pccstream: { recording(): string } }).pccstream.recording());
      writeFileSync(testInfo.outputPath(`recording-${name}.jsonl`), jsonl);
    }
  } finally {
    console.log((await demo.stop()).split('\n').filter((l) => l.includes('peak RSS')).join('\n'));
  }
});

import { test, expect, type Page } from '@playwright/test';
import { armUrl, startDemo, type RunningDemo } from '../lib/demo';

// Sprout and RemyCC sessions get their own dashboard charts and metrics rows (issue 15):
// one `pccstream demo --compare` with both arms, each behind an emulator on the same path.
// The Remy arm names its table the way `?cc=remy:table=NAME` does.
const SCENARIO = 'const-12mbps-30ms-1bdp';

type Rec = Record<string, unknown> & { type: string };
interface Api {
  metrics(): { playSeconds: number; error: string | null };
  telemetry(): Rec[];
  dashboard(): { visible: boolean; points: Record<string, number>; renders: number };
}

let demo: RunningDemo;

test.beforeAll(async () => {
  demo = await startDemo(['--compare', 'sprout,remy:table=2013-delta1', '--scenario', SCENARIO, '--seed', '7']);
});

test.afterAll(async () => {
  await demo.stop();
});

async function playAndSnapshot(page: Page, index: number, seconds: number): Promise<{ telemetry: Rec[]; points: Record<string, number>; charts: string[]; rows: string[] }> {
  await page.goto(armUrl(demo.info, index, { buffer: 10 }));
  await page.waitForFunction(
    (s) => {
      const api = (window as unknown as { pccstream?: Api }).pccstream;
      if (!api) return false;
      const m = api.metrics();
      if (m.error !== null) throw new Error(m.error);
      return m.playSeconds >= s;
    },
    seconds,
    { timeout: 60_000, polling: 250 },
  );
  await page.waitForTimeout(600); // a redraw and a metrics-table refresh after the last record
  return page.evaluate(() => {
    const api = (window as unknown as { pccstream: Api }).pccstream;
    const charts = [...document.querySelectorAll<HTMLElement>('figure.dashboard-chart')].map((f) => f.dataset['chart'] ?? '');
    const rows = [...document.querySelectorAll('#metrics th')].map((th) => th.textContent ?? '');
    return { telemetry: api.telemetry(), points: api.dashboard().points, charts, rows };
  });
}

/** The server's own telemetry byte count over media bytes, for the open session of `cc`. */
async function overhead(cc: string): Promise<number> {
  const sessions = (await (await fetch(`${demo.info.page_url}api/sessions`)).json()) as Array<{ cc: string; closed: boolean; telemetry_overhead: number }>;
  const mine = sessions.filter((x) => x.cc === cc && !x.closed).at(-1)!;
  console.log(`${cc} telemetry overhead: ${JSON.stringify(mine)}`);
  return mine.telemetry_overhead;
}

const seriesOf = (points: Record<string, number>, chart: string): [string, number][] =>
  Object.entries(points).filter(([k]) => k.startsWith(`${chart}/`));

test('a Sprout session shows its forecast, allowed rate and queue estimate with data', async ({ page }, testInfo) => {
  const { telemetry, points, charts, rows } = await playAndSnapshot(page, 0, 6);
  await page.screenshot({ path: testInfo.outputPath('dashboard-sprout.png'), fullPage: true });
  expect(telemetry[0]?.['cc']).toBe('sprout');
  expect(charts).toEqual(expect.arrayContaining(['sprout-rate', 'sprout-forecast']));
  expect(charts).not.toContain('utility');
  for (const chart of ['sprout-rate', 'sprout-forecast']) {
    const series = seriesOf(points, chart);
    expect(series.length).toBeGreaterThan(0);
    const empty = series.filter(([, n]) => n === 0).map(([k]) => k);
    expect(empty, `series without points: ${empty.join(', ')}`).toEqual([]);
  }
  const ticks = telemetry.filter((r) => r.type === 'sprout');
  expect(ticks.length).toBeGreaterThan(100); // 50 per second
  const last = ticks.at(-1)!;
  expect(Array.isArray(last['forecast_packets'])).toBe(true);
  expect(Number(last['allowed_rate_bps'])).toBeGreaterThan(0);
  expect(rows).toEqual(expect.arrayContaining(['Sprout: cautious forecast (cumulative packets per tick)', 'Sprout: queue estimate']));
  expect(await overhead('sprout')).toBeLessThanOrEqual(0.02);
});

test('a Remy session shows its memory and the rule that fired with data', async ({ page }, testInfo) => {
  const { telemetry, points, charts, rows } = await playAndSnapshot(page, 1, 6);
  await page.screenshot({ path: testInfo.outputPath('dashboard-remy.png'), fullPage: true });
  expect(telemetry[0]?.['cc']).toBe('remy');
  expect(telemetry[0]?.['cc_params']).toEqual({ table: '2013-delta1' });
  expect(charts).toEqual(expect.arrayContaining(['remy-memory', 'remy-rule', 'remy-window']));
  expect(charts).not.toContain('utility');
  for (const chart of ['remy-memory', 'remy-rule', 'remy-window']) {
    const series = seriesOf(points, chart);
    expect(series.length).toBeGreaterThan(0);
    const empty = series.filter(([, n]) => n === 0).map(([k]) => k);
    expect(empty, `series without points: ${empty.join(', ')}`).toEqual([]);
  }
  const rules = telemetry.filter((r) => r.type === 'remy');
  expect(rules.length).toBeGreaterThan(20);
  expect(Number.isInteger(rules.at(-1)!['rule'])).toBe(true);
  expect(rows).toEqual(expect.arrayContaining(['Remy: rule fired', 'Remy: action', 'Remy: send / receive EWMA']));
  expect(await overhead('remy')).toBeLessThanOrEqual(0.02);
});

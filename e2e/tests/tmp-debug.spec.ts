import { test } from '@playwright/test';
import { startServer } from '../lib/server';
import { playToEnd, playerUrl } from '../lib/player';

test('debug', async ({ page }) => {
  const server = await startServer({ cc: process.env.DBG_CC ?? 'vivace' });
  const extra = JSON.parse(process.env.DBG_PARAMS ?? '{}') as Record<string, string>;
  await page.goto(playerUrl(server.info.page_url, { mode: 'fixed', bitrate: 1500, ...extra }));
  const m = await playToEnd(page, 90_000);
  const marks = await page.evaluate(() => performance.getEntriesByType('mark').map((e) => `${e.name}@${e.startTime.toFixed(0)}`));
  console.log(JSON.stringify({ startup: m.startupDelayMs, br: m.bufferingRatio, stalls: m.stallCount, stallS: m.stallSeconds, marks }));
  for (const s of m.segments as unknown as Record<string, number>[]) console.log(JSON.stringify(s));
  await server.stop();
});

import { test, expect, type Frame } from '@playwright/test';
import { chromiumLaunchOptions } from '../lib/browser';
import { startDemo, type RunningDemo } from '../lib/demo';
import { WEBRTC_ARGS } from '../lib/webrtc';

// `pccstream demo --cc vivace,webrtc` (docs/dashboard.md): live vivace over WebTransport
// beside a WebRTC call, each through its own emulator running issue #8's first scenario
// (6 Mbit/s, 40 ms RTT, 1-BDP queue) with the same seed. The webrtc arm makes vivace live.
const SCENARIO = 'live-6mbps-40ms-1bdp';
const ONE_WAY_MS = 20;

test.use({ launchOptions: chromiumLaunchOptions(WEBRTC_ARGS) });

interface SideState {
  mode: string;
  state: string;
  error: string | null;
  playSeconds: number;
  latencyP50Ms: number | null;
  latencyLastMs: number | null;
  points: Record<string, number>;
  stalls: number;
  renders: number;
  senderTarget: number | null;
  /** The live side's start decision (edge, target, wait, buffered ranges), for a timeout's message. */
  liveStart: unknown;
}

async function sideState(frame: Frame): Promise<SideState> {
  return frame.evaluate(() => {
    type Api = {
      metrics(): { mode: string; state: string; error: string | null; playSeconds: number; latencyP50Ms: number | null; latencyLastMs: number | null };
      dashboard(): { points: Record<string, number>; stalls: number; renders: number } | null;
      sender?(): { targetBitrateBps: number | null } | null;
      liveStart?(): unknown;
    };
    const api = (window as unknown as { pccstream?: Api }).pccstream;
    if (!api) return { mode: '', state: 'loading', error: null, playSeconds: 0, latencyP50Ms: null, latencyLastMs: null, points: {}, stalls: 0, renders: 0, senderTarget: null, liveStart: null };
    const m = api.metrics();
    const d = api.dashboard();
    return {
      mode: m.mode,
      state: m.state,
      error: m.error,
      playSeconds: m.playSeconds,
      latencyP50Ms: m.latencyP50Ms,
      latencyLastMs: m.latencyLastMs,
      points: d?.points ?? {},
      stalls: d?.stalls ?? 0,
      renders: d?.renders ?? 0,
      senderTarget: api.sender?.()?.targetBitrateBps ?? null,
      liveStart: m.state === 'startup' ? (api.liveStart?.() ?? null) : null,
    };
  });
}

let demo: RunningDemo;

test.beforeAll(async () => {
  demo = await startDemo(['--cc', 'vivace,webrtc', '--scenario', SCENARIO, '--seed', '3']);
});

test.afterAll(async () => {
  const output = await demo?.stop();
  console.log((output ?? '').split('\n').filter((l) => l.startsWith('pccstream demo:')).join('\n'));
});

test('compare vivace (live) with webrtc: both sides play and chart their latency', async ({ page }, testInfo) => {
  test.setTimeout(60_000);
  const url = new URL(demo.info.url);
  expect(url.pathname).toMatch(/compare\.html$/);
  expect(new URLSearchParams(url.searchParams.get('a')!).get('mode')).toBe('live');
  expect(new URLSearchParams(url.searchParams.get('b')!).get('mode')).toBe('webrtc');
  expect(demo.info.arms.map((a) => a.cc)).toEqual(['vivace', 'webrtc']);
  expect(demo.info.arms[1]!.turn_port).toBeGreaterThan(0);

  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.goto(demo.info.url);
  await expect.poll(() => page.frames().filter((f) => f.name().startsWith('side-')).length).toBe(2);
  const frame = (name: string): Frame => page.frames().find((f) => f.name() === name)!;
  const [a, b] = [frame('side-a'), frame('side-b')];

  // Both play for 5 s, and both dashboards have drawn glass-to-glass latency points.
  const ready = (s: SideState): boolean => s.playSeconds >= 5 && (s.points['latency/glass-to-glass'] ?? 0) >= 10;
  // A timeout says how far each side got: a side still in startup while its transport
  // delivers is a player that did not start, not a slow machine.
  let last: [SideState, SideState] | null = null;
  try {
    await expect
      .poll(
        async () => {
          last = [await sideState(a), await sideState(b)];
          for (const s of last) if (s.error !== null) throw new Error(`${s.mode}: ${s.error}`);
          return last.every(ready);
        },
        { timeout: 40_000, intervals: [500] },
      )
      .toBe(true);
  } catch (error) {
    throw new Error(`both sides not ready; last seen ${JSON.stringify(last)}: ${String(error)}`);
  }
  const [live, rtc] = last!;
  const figures = { live, rtc };
  console.log(`compare webrtc: ${JSON.stringify(figures)}`);
  testInfo.annotations.push({ type: 'figures', description: JSON.stringify(figures) });
  await page.screenshot({ path: testInfo.outputPath('compare-webrtc.png') });

  // A: live vivace, with the latency chart (glass-to-glass, playhead, target).
  expect(live.mode).toBe('live');
  expect(live.latencyP50Ms!).toBeGreaterThanOrEqual(ONE_WAY_MS);
  expect(live.points['latency/target latency']).toBeGreaterThan(0);
  expect(live.points['latency/playhead behind live']).toBeGreaterThan(0);
  expect(live.points['rate/pacing rate']).toBeGreaterThan(0);
  // B: the WebRTC receiver with its embedded sender: latency, rates (GCC's target), RTT.
  expect(rtc.mode).toBe('webrtc');
  expect(rtc.state).toBe('playing');
  expect(rtc.latencyP50Ms!).toBeGreaterThanOrEqual(ONE_WAY_MS);
  expect(rtc.senderTarget!).toBeGreaterThan(0);
  for (const series of ['rate/received bitrate', 'rate/target bitrate (encoder)', 'rtt/candidate-pair RTT', 'latency/jitter-buffer delay', 'video/frames/s']) {
    expect(rtc.points[series], series).toBeGreaterThan(0);
  }
  expect(rtc.renders).toBeGreaterThan(10);
});

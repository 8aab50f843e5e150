import { test, expect } from '@playwright/test';
import { chromiumLaunchOptions } from '../lib/browser';
import { startServer, type RunningServer } from '../lib/server';
import { callMetrics, callUrls, latencyWindow, startEmulator, startTurn, turnUrl, waitState, WEBRTC_ARGS, type Child, type TurnInfo } from '../lib/webrtc';

// The WebRTC arm (docs/webrtc.md): sender page -> coturn -> emulator -> receiver page.
// Link: 6 Mbit/s, 20 ms one-way delay each way, 100 kB queue; the downlink (media) drops to
// 800 kbit/s THROTTLE_AT_S after the emulator starts (infra/scenarios/webrtc-throttle.toml).
const ONE_WAY_DELAY_MS = 20;
const THROTTLE_AT_S = 16;
const THROTTLED_FOR_S = 10;

test.use({ launchOptions: chromiumLaunchOptions(WEBRTC_ARGS) });

let server: RunningServer;
let turn: Child & { info: TurnInfo };

test.beforeAll(async () => {
  server = await startServer();
  turn = await startTurn();
});

test.afterAll(async () => {
  await turn?.stop();
  await server?.stop();
});

test('a WebRTC call through the emulator: latency above the link delay, higher when throttled', async ({ browser }, testInfo) => {
  test.setTimeout(90_000);
  const emulator = await startEmulator(turn.info.port, ['--scenario', 'webrtc-throttle', '--param', `throttle_at_s=${THROTTLE_AT_S}`, '--param', `delay_ms=${ONE_WAY_DELAY_MS}`]);
  const throttleAtMs = emulator.startedAtMs + THROTTLE_AT_S * 1000;
  const urls = callUrls(server.info.page_url, 'e2e', turnUrl(turn.info.port), turnUrl(emulator.port));
  const receiverContext = await browser.newContext();
  const senderContext = await browser.newContext();
  try {
    const receiver = await receiverContext.newPage();
    const sender = await senderContext.newPage();
    await receiver.goto(urls.receiver);
    await sender.goto(urls.sender);
    await waitState(receiver, 'playing', 20_000);
    const playingAtMs = Date.now();
    expect(playingAtMs + 6_000).toBeLessThan(throttleAtMs); // enough clean call before the throttle

    // Clean phase: from 3 s after the first frame (ramp-up) to the throttle.
    await receiver.waitForTimeout(throttleAtMs - Date.now());
    const clean = await latencyWindow(receiver, playingAtMs + 3_000, throttleAtMs);
    const cleanMetrics = await callMetrics(receiver);
    // Throttled phase: the 800 kbit/s downlink for THROTTLED_FOR_S.
    await receiver.waitForTimeout(THROTTLED_FOR_S * 1000);
    const throttled = await latencyWindow(receiver, throttleAtMs, throttleAtMs + THROTTLED_FOR_S * 1000);
    const m = await callMetrics(receiver);
    await receiver.screenshot({ path: testInfo.outputPath('receiver.png') });

    const figures = { clean, cleanMetrics: pick(cleanMetrics), throttled, final: pick(m) };
    console.log(`webrtc call: ${JSON.stringify(figures)}`);
    testInfo.annotations.push({ type: 'figures', description: JSON.stringify(figures) });

    expect(m.error).toBeNull();
    expect(m.mode).toBe('webrtc');
    expect(clean.frames).toBeGreaterThan(60);
    expect(throttled.frames).toBeGreaterThan(10);
    // Glass-to-glass latency includes the emulated one-way delay (and capture, coding, jitter buffer).
    expect(clean.latencyP50Ms!).toBeGreaterThanOrEqual(ONE_WAY_DELAY_MS);
    expect(m.latencyP50Ms!).toBeGreaterThanOrEqual(ONE_WAY_DELAY_MS);
    expect(cleanMetrics.framesPerSecond ?? 0).toBeGreaterThan(10);
    expect(cleanMetrics.frameHeight ?? 0).toBeGreaterThan(0);
    // A 800 kbit/s bottleneck under a 2.5 Mbit/s sender queues until congestion control reacts.
    expect(throttled.latencyP95Ms!).toBeGreaterThan(clean.latencyP95Ms!);
  } finally {
    await senderContext.close();
    await receiverContext.close();
    await emulator.stop();
  }
});

function pick(m: Record<string, unknown>): Record<string, unknown> {
  const keys = ['playSeconds', 'latencyP50Ms', 'latencyP95Ms', 'bufferingRatio', 'freezeCount', 'totalFreezesDurationS', 'framesPerSecond', 'frameWidth', 'frameHeight', 'jitterBufferDelayMs', 'receiveBitrateBps', 'startupDelayMs', 'framesShown', 'framesSkipped'];
  return Object.fromEntries(keys.map((k) => [k, m[k]]));
}

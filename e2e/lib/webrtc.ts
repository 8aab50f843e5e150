import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { contractUrl } from './contract';
import { PCCSTREAM } from './server';

/** Chromium flag the WebRTC pages need when loopback is the only interface (docs/webrtc.md). */
export const WEBRTC_ARGS = ['--allow-loopback-in-peer-connection'];

export interface Child {
  stop(): Promise<string>;
}

function track(child: ChildProcess): () => string {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return () => output;
}

async function stop(child: ChildProcess, output: () => string): Promise<string> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  return output();
}

export interface TurnInfo {
  port: number;
  url: string;
  username: string;
  credential: string;
}

/** `pccstream webrtc turn` (coturn) on a free port of 127.0.0.1. */
export async function startTurn(): Promise<Child & { info: TurnInfo }> {
  const readyFile = join(mkdtempSync(join(tmpdir(), 'pccstream-turn-')), 'ready.json');
  const child = spawn(PCCSTREAM, ['webrtc', 'turn', '--port', '0', '--ready-file', readyFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = track(child);
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (existsSync(readyFile)) {
      try {
        return { info: JSON.parse(readFileSync(readyFile, 'utf8')) as TurnInfo, stop: () => stop(child, output) };
      } catch {
        // written but not complete yet
      }
    }
    if (child.exitCode !== null) throw new Error(`pccstream webrtc turn exited ${child.exitCode}:\n${output()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`pccstream webrtc turn did not become ready in 15 s:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `pccstream emulate` in front of `upstreamPort`; `startedAtMs` = its timeline's t = 0. */
export async function startEmulator(upstreamPort: number, args: string[]): Promise<Child & { port: number; startedAtMs: number }> {
  const child = spawn(PCCSTREAM, ['emulate', '--listen', '127.0.0.1:0', '--upstream', `127.0.0.1:${upstreamPort}`, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = track(child);
  const deadline = Date.now() + 15_000;
  for (;;) {
    const match = /listening on 127\.0\.0\.1:(\d+)/.exec(output());
    if (match) return { port: Number(match[1]), startedAtMs: Date.now(), stop: () => stop(child, output) };
    if (child.exitCode !== null) throw new Error(`pccstream emulate exited ${child.exitCode}:\n${output()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`pccstream emulate did not start in 15 s:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const turnUrl = (port: number): string => `turn:127.0.0.1:${port}?transport=udp`;

export function callUrls(pageUrl: string, room: string, senderTurn: string, receiverTurn: string, sender: Record<string, string | number> = {}): { sender: string; receiver: string } {
  return {
    sender: contractUrl(new URL('webrtc-send.html', pageUrl), 'webrtc_sender', { room, turn: senderTurn, ...sender }),
    receiver: contractUrl(new URL('webrtc-recv.html', pageUrl), 'webrtc_receiver', { room, turn: receiverTurn }),
  };
}

/** The receiver's `window.pccstream.metrics()` (web/README.md, "WebRTC arm"). */
export interface ReceiverMetrics {
  mode: 'webrtc';
  state: string;
  error: string | null;
  playSeconds: number;
  freezeCount: number;
  totalFreezesDurationS: number;
  bufferingRatio: number;
  framesDecoded: number;
  framesPerSecond: number | null;
  frameWidth: number | null;
  frameHeight: number | null;
  jitterBufferDelayMs: number | null;
  receiveBitrateBps: number | null;
  startupDelayMs: number | null;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  framesShown: number;
  framesSkipped: number;
}

export interface LatencyWindow {
  frames: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  latencyMeanMs: number | null;
}

type Api = { metrics(): ReceiverMetrics & Record<string, unknown>; latencyWindow(a: number, b: number): LatencyWindow };

export async function callMetrics(page: Page): Promise<ReceiverMetrics & Record<string, unknown>> {
  return page.evaluate(() => (window as unknown as { pccstream: Api }).pccstream.metrics());
}

export async function latencyWindow(page: Page, fromMs: number, toMs: number): Promise<LatencyWindow> {
  return page.evaluate(([a, b]) => (window as unknown as { pccstream: Api }).pccstream.latencyWindow(a!, b!), [fromMs, toMs]);
}

/** Waits until the page's call state is `state` (fails early on `failed`). */
export async function waitState(page: Page, state: string, timeoutMs: number): Promise<void> {
  await page.waitForFunction(
    (wanted) => {
      const api = (window as unknown as { pccstream?: { metrics(): { state: string } } }).pccstream;
      const s = api?.metrics().state;
      return s === wanted || s === 'failed';
    },
    state,
    { timeout: timeoutMs, polling: 100 },
  );
  const m = (await page.evaluate(() => (window as unknown as { pccstream: { metrics(): { state: string; error: string | null } } }).pccstream.metrics())) as { state: string; error: string | null };
  if (m.state !== state) throw new Error(`call ${m.state}: ${m.error ?? ''}`);
}

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PCCSTREAM } from './server';

export interface RunningEmulator {
  /** The UDP port the browser dials (`server=https://127.0.0.1:PORT/stream`). */
  port: number;
  /** performance.now() (this process) when the emulator started: its scenario's time 0. */
  startedAtMs: number;
  stop(): Promise<string>;
}

/** Starts `pccstream emulate` between the browser and a server's QUIC port. */
export async function startEmulator(upstreamPort: number, args: string[]): Promise<RunningEmulator> {
  const child = spawn(PCCSTREAM, ['emulate', '--listen', '127.0.0.1:0', '--upstream', `127.0.0.1:${upstreamPort}`, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pccstream emulate did not start in 10 s:\n${output}`)), 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on [\d.]+:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`pccstream emulate exited ${code}:\n${output}`));
    });
  });
  const startedAtMs = performance.now();
  return {
    port,
    startedAtMs,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      return output;
    },
  };
}

export interface ThrottleScenario {
  name: string;
  oneWayMs: number;
  queue: string;
  /** The downlink's rate until `atS`, then `throttledKbps`. */
  rateKbps: number;
  throttledKbps: number;
  atS: number;
}

/** A scenario file (in a fresh temporary directory) whose downlink drops at one moment. */
export function writeThrottleScenario(s: ThrottleScenario): string {
  const path = join(mkdtempSync(join(tmpdir(), `pccstream-${s.name}-`)), `${s.name}.toml`);
  writeFileSync(
    path,
    [
      `name = "${s.name}"`,
      `description = "${s.oneWayMs} ms one way; the downlink drops from ${s.rateKbps / 1000} to ${s.throttledKbps / 1000} Mbit/s at ${s.atS} s"`,
      '[link]',
      `delay_ms = ${s.oneWayMs}`,
      `queue = "${s.queue}"`,
      '[down]',
      `rate_kbps = ${s.rateKbps}`,
      '[[timeline]]',
      `at_s = ${s.atS}`,
      'direction = "down"',
      `rate_kbps = ${s.throttledKbps}`,
      '',
    ].join('\n'),
  );
  return path;
}

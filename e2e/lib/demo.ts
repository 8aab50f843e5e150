import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contractUrl } from './contract';
import { PCCSTREAM, REPO } from './server';

export interface DemoInfo {
  url: string;
  page_url: string;
  http_port: number;
  quic_port: number;
  link_status_port: number;
  certificate_sha256: string;
  scenario: string;
  seed: number;
  /** A `webrtc` arm also has coturn's port and its signalling room (the receiver page adds a suffix). */
  arms: Array<{ cc: string; emulator_port: number | null; turn_port?: number; room?: string }>;
}

export interface RunningDemo {
  info: DemoInfo;
  /** The directory served at /recordings/. */
  recordingsDir: string;
  stop(): Promise<string>;
}

/** Starts `pccstream demo` (server + one emulator per arm) on free ports. */
export async function startDemo(args: string[]): Promise<RunningDemo> {
  const dir = mkdtempSync(join(tmpdir(), 'pccstream-demo-'));
  const readyFile = join(dir, 'ready.json');
  const recordingsDir = join(dir, 'recordings');
  const child = spawn(
    PCCSTREAM,
    ['demo', '--http-port', '0', '--ready-file', readyFile, '--recordings-dir', recordingsDir, '--state-dir', join(REPO, '.cache', 'state'), ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 30_000;
  while (!existsSync(readyFile)) {
    if (child.exitCode !== null) throw new Error(`pccstream demo exited ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`pccstream demo did not become ready in 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const info = JSON.parse(readFileSync(readyFile, 'utf8')) as DemoInfo;
  return {
    info,
    recordingsDir,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      return output;
    },
  };
}

/** The player page through arm `index`'s emulator. */
export function armUrl(info: DemoInfo, index: number, extra: Record<string, string | number> = {}): string {
  const arm = info.arms[index]!;
  const params: Record<string, string | number> = { cc: arm.cc };
  if (arm.emulator_port !== null) params['server'] = `https://127.0.0.1:${arm.emulator_port}/stream`;
  return contractUrl(new URL(info.page_url), 'player', { ...params, ...extra });
}

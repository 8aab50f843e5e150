import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '..', '..');
export const PCCSTREAM = join(REPO, '.venv', 'bin', 'pccstream');
export const DEFAULT_MEDIA = join(REPO, 'media', 'default');

export interface ReadyInfo {
  pid: number;
  quic_port: number;
  http_port: number;
  webtransport_url: string;
  page_url: string;
  certificate_sha256: string;
}

export interface RunningServer {
  info: ReadyInfo;
  /** Highest resident memory of the server process so far, MiB (VmHWM). */
  peakRssMiB(): number;
  stop(): Promise<string>;
}

/** Starts `pccstream serve` on free ports and waits until it is serving. */
export async function startServer(options: { media?: string; cc?: string; args?: string[] } = {}): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pccstream-e2e-'));
  const readyFile = join(dir, 'ready.json');
  const args = [
    'serve',
    '--media', options.media ?? DEFAULT_MEDIA,
    '--port', '0',
    '--http-port', '0',
    '--ready-file', readyFile,
    '--state-dir', join(REPO, '.cache', 'state'),
    '--cc', options.cc ?? 'cubic',
    ...(options.args ?? []),
  ];
  const child = spawn(PCCSTREAM, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 20_000;
  while (!existsSync(readyFile)) {
    if (child.exitCode !== null) throw new Error(`pccstream serve exited ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`pccstream serve did not become ready in 20 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const info = JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
  return {
    info,
    peakRssMiB: () => readPeakRss(child),
    stop: () => stopProcess(child, () => output),
  };
}

function readPeakRss(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

async function stopProcess(child: ChildProcess, output: () => string): Promise<string> {
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  return output();
}

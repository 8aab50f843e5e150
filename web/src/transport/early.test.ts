import { describe, expect, it } from 'vitest';
import { discardEarlySession, takeEarlySession, type EarlySession } from './early';

/** A stand-in for WebTransport that records close(). */
function fakeTransport(): WebTransport & { closedByPlayer: boolean } {
  const fake = {
    closedByPlayer: false,
    close() {
      fake.closedByPlayer = true;
    },
  };
  return fake as unknown as WebTransport & { closedByPlayer: boolean };
}

const URL_A = 'https://127.0.0.1:4433/stream?telemetry=deflate&vod.first=0%3A0';
const HASH = new Uint8Array(32).fill(7);

describe('takeEarlySession', () => {
  it('adopts the session index.html opened to the same URL', async () => {
    const transport = fakeTransport();
    const early: EarlySession = { url: URL_A, certHash: HASH, startMs: 12, transport };
    expect(await takeEarlySession(URL_A, new Uint8Array(32).fill(7), Promise.resolve(early))).toBe(early);
    expect(transport.closedByPlayer).toBe(false);
  });

  it('closes one opened to another URL and connects itself', async () => {
    const transport = fakeTransport();
    const other = `${URL_A}&cc=bbr`;
    expect(await takeEarlySession(other, HASH, Promise.resolve({ url: URL_A, certHash: HASH, startMs: 0, transport }))).toBeNull();
    expect(transport.closedByPlayer).toBe(true);
  });

  it('closes one opened with another certificate hash', async () => {
    const transport = fakeTransport();
    const early = { url: URL_A, certHash: new Uint8Array(32).fill(8), startMs: 0, transport };
    expect(await takeEarlySession(URL_A, HASH, Promise.resolve(early))).toBeNull();
    expect(transport.closedByPlayer).toBe(true);
  });

  it('connects itself when there is none, or the early attempt failed', async () => {
    expect(await takeEarlySession(URL_A, HASH, undefined)).toBeNull();
    expect(await takeEarlySession(URL_A, HASH, null)).toBeNull();
    expect(await takeEarlySession(URL_A, HASH, Promise.resolve(null))).toBeNull();
    expect(await takeEarlySession(URL_A, HASH, Promise.reject(new Error('config 500')))).toBeNull();
  });
});

describe('discardEarlySession', () => {
  it('closes the early session the player will not use', async () => {
    const transport = fakeTransport();
    const started = Promise.resolve({ url: URL_A, certHash: HASH, startMs: 0, transport });
    discardEarlySession(started);
    await started;
    await Promise.resolve();
    expect(transport.closedByPlayer).toBe(true);
    discardEarlySession(Promise.reject(new Error('no config'))); // no unhandled rejection
  });
});

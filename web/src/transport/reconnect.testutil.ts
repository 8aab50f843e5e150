/** Reconnect options on a fake clock for tests: sleeping advances it and is recorded. */

import type { ReconnectOptions } from './reconnect';

export function fakeClockReconnectOptions(): ReconnectOptions & { slept: number[]; statuses: string[] } {
  let now = 0;
  const slept: number[] = [];
  const statuses: string[] = [];
  return {
    firstDelayMs: 250,
    maxDelayMs: 4000,
    giveUpAfterMs: 10_000,
    sleep: (ms) => {
      slept.push(ms);
      now += ms;
      return Promise.resolve();
    },
    now: () => now,
    status: (text) => statuses.push(text),
    slept,
    statuses,
  };
}

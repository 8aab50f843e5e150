import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventLoopLag, LAG_HISTOGRAM_MAX_MS, LAG_INTERVAL_MS, watchEventLoop } from './event-loop-lag';

describe('EventLoopLag', () => {
  it('is null before any tick', () => {
    expect(new EventLoopLag().snapshot()).toEqual({ eventLoopLagP95Ms: null, eventLoopLagMaxMs: null });
  });

  it('measures lateness against the arming time plus the interval', () => {
    const lag = new EventLoopLag(50);
    lag.tick(0, 50); // on time
    lag.tick(50, 49.5); // early: not negative
    lag.tick(100, 180.75); // 30.75 ms late
    expect(lag.samples).toBe(3);
    expect(lag.snapshot()).toEqual({ eventLoopLagP95Ms: 30, eventLoopLagMaxMs: 30.75 });
  });

  it('takes the nearest-rank 95th percentile: one long task in 20 ticks is the p95', () => {
    const lag = new EventLoopLag(50);
    for (let i = 0; i < 19; i += 1) lag.tick(i * 100, i * 100 + 52); // 2 ms late
    lag.tick(5000, 5000 + 50 + 400); // a 400 ms long task
    expect(lag.percentile(0.95)).toBe(2); // rank 19 of 20
    lag.tick(6000, 6000 + 50 + 400);
    expect(lag.percentile(0.95)).toBe(400); // rank 20 of 21
    expect(lag.snapshot().eventLoopLagMaxMs).toBe(400);
  });

  it('caps the histogram but keeps the exact maximum', () => {
    const lag = new EventLoopLag(50);
    lag.tick(0, 50 + 25_000);
    expect(lag.snapshot()).toEqual({ eventLoopLagP95Ms: LAG_HISTOGRAM_MAX_MS, eventLoopLagMaxMs: 25_000 });
  });
});

describe('watchEventLoop', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('records only the ticks while active', () => {
    vi.useFakeTimers();
    const lag = new EventLoopLag();
    let active = false;
    const stop = watchEventLoop(lag, () => active, () => Date.now());
    vi.advanceTimersByTime(LAG_INTERVAL_MS * 4);
    expect(lag.samples).toBe(0);
    active = true;
    vi.advanceTimersByTime(LAG_INTERVAL_MS * 4);
    expect(lag.samples).toBe(4);
    expect(lag.snapshot().eventLoopLagMaxMs).toBe(0); // fake timers are never late
    stop();
    vi.advanceTimersByTime(LAG_INTERVAL_MS * 4);
    expect(lag.samples).toBe(4);
  });
});

import { describe, expect, it } from 'vitest';
import { LIVE_STALL_THRESHOLD_S, PlaybackMetrics, type PlaybackSample } from './playback';

/**
 * A fake player: a clock in ms, a playhead that advances while playing, a buffer that
 * drains while playing and grows with `deliver`. Samples every `stepMs`.
 */
class FakePlayer {
  t = 0;
  currentTime = 0;
  bufferEnd = 0;
  paused = false;
  eos = false;
  duration = Infinity;
  rendition: number | null = 0;
  bitrateBps: number | null = 1_000_000;
  readonly metrics = new PlaybackMetrics();

  constructor(readonly stepMs = 25) {}

  sampleNow(): void {
    const s: PlaybackSample = {
      t: this.t,
      currentTime: this.currentTime,
      bufferAhead: Math.max(0, this.bufferEnd - this.currentTime),
      ended: this.ended,
      paused: this.paused,
      eos: this.eos,
      rendition: this.rendition,
      bitrateBps: this.bitrateBps,
    };
    this.metrics.sample(s);
  }

  get ended(): boolean {
    return this.currentTime >= this.duration;
  }

  /** Run for `ms`: the playhead advances when not paused and media is buffered. */
  run(ms: number): void {
    const end = this.t + ms;
    while (this.t < end - 1e-9) {
      const dt = Math.min(this.stepMs, end - this.t);
      if (!this.paused && !this.ended) {
        this.currentTime = Math.min(this.currentTime + dt / 1000, this.bufferEnd, this.duration);
      }
      this.t += dt;
      this.sampleNow();
    }
  }
}

describe('PlaybackMetrics', () => {
  it('reports nothing before the play request', () => {
    const p = new FakePlayer();
    p.bufferEnd = 10;
    p.paused = true;
    p.run(200);
    const m = p.metrics.snapshot();
    expect(m).toMatchObject({ state: 'loading', startupDelayMs: null, bufferingRatio: 0, playSeconds: 0, stallSeconds: 0 });
  });

  it('measures startup from the play request to the first frame, excluded from stalls', () => {
    const p = new FakePlayer(50);
    p.metrics.startRequested(0);
    p.sampleNow();
    p.run(1000); // no media yet: startup, not a stall
    expect(p.metrics.snapshot().state).toBe('startup');
    p.bufferEnd = 10;
    p.run(2000);
    const m = p.metrics.snapshot();
    // Playback began inside the interval after the media arrived: within one step of 1000 ms.
    expect(m.startupDelayMs).not.toBeNull();
    expect(m.startupDelayMs ?? 0).toBeGreaterThanOrEqual(1000);
    expect(m.startupDelayMs ?? 0).toBeLessThanOrEqual(1050);
    expect(m.stallSeconds).toBe(0);
    expect(m.stallCount).toBe(0);
    expect(m.playSeconds).toBeCloseTo(2, 1);
    expect(m.bufferingRatio).toBe(0);
    expect(m.state).toBe('playing');
  });

  it('interpolates the start of playback inside a sampling interval', () => {
    const m = new PlaybackMetrics();
    m.startRequested(100);
    const base = { bufferAhead: 5, ended: false, paused: false, eos: false, rendition: 0, bitrateBps: 1e6 };
    m.sample({ ...base, t: 100, currentTime: 0 });
    m.sample({ ...base, t: 150, currentTime: 0 });
    m.sample({ ...base, t: 200, currentTime: 0.02 }); // began at ~180
    const s = m.snapshot();
    expect(s.startupDelayMs).toBeCloseTo(80, 6);
    expect(s.playSeconds).toBeCloseTo(0.02, 6);
  });

  it('counts a stall and its duration, then recovery', () => {
    const p = new FakePlayer(25);
    p.metrics.startRequested(0);
    p.bufferEnd = 2;
    p.sampleNow();
    p.run(4000); // plays 2 s, then stalls 2 s (buffer empty)
    let m = p.metrics.snapshot();
    expect(m.state).toBe('stalled');
    expect(m.stallCount).toBe(1);
    // Low from buffer < 0.1 s (t ≈ 1.9 s), but the playhead plays on to 2 s: stalled 2 to 4 s.
    expect(m.stallSeconds).toBeCloseTo(2, 6);
    expect(m.playSeconds).toBeCloseTo(2, 6);
    p.bufferEnd = 10;
    p.run(3000);
    m = p.metrics.snapshot();
    expect(m.stallCount).toBe(1);
    expect(m.stallSeconds).toBeCloseTo(2, 6);
    expect(m.playSeconds).toBeCloseTo(5, 6);
    expect(m.bufferingRatio).toBeCloseTo(2 / 7, 6);
    expect(m.state).toBe('playing');
  });

  it('does not count a thin buffer that keeps up as a stall, however long', () => {
    // Chunks arrive just in time: 40–90 ms ahead for 10 s, the playhead never waits. The page
    // clock and currentTime disagree by a few ms per sample (timer jitter), and that cancels.
    const m = new PlaybackMetrics();
    m.startRequested(0);
    const base = { ended: false, paused: false, eos: false, rendition: 0, bitrateBps: 1e6 };
    m.sample({ ...base, t: 0, currentTime: 0, bufferAhead: 1 });
    let ct = 0;
    for (let i = 1; i <= 400; i++) {
      const jitterS = (i % 2 === 0 ? 3 : -3) / 1000;
      ct = i * 0.025 + (i === 400 ? 0 : jitterS);
      m.sample({ ...base, t: i * 25, currentTime: ct, bufferAhead: 0.04 + 0.05 * ((i % 20) / 20) });
    }
    const s = m.snapshot();
    expect(s.stallCount).toBe(0);
    expect(s.stallSeconds).toBeLessThan(0.005);
    expect(s.playSeconds).toBeCloseTo(10, 2);
    expect(s.state).toBe('playing');
  });

  it('counts no stall time when a thin buffer keeps pace within the clock tick', () => {
    // 0.1 s + 0.2 s is not 0.3 s in doubles, and the page clock ticks every 0.1 ms: each such
    // interval left ~1e-14 ms or one tick of "stall" (runs stored 5e-17 % and 3e-4 %).
    const m = new PlaybackMetrics();
    m.startRequested(0);
    const base = { ended: false, paused: false, eos: false, rendition: 0, bitrateBps: 1e6 };
    m.sample({ ...base, t: 0, currentTime: 0, bufferAhead: 1 });
    let t = 0;
    let ct = 0;
    for (let i = 1; i <= 300; i++) {
      const stepS = i % 2 === 0 ? 0.1 : 0.2;
      t += stepS * 1000;
      ct += stepS;
      const tickMs = i % 3 === 0 ? 0.1 : 0; // the clock read one tick late
      m.sample({ ...base, t: t + 0.1 * i + tickMs, currentTime: ct + 0.0001 * i, bufferAhead: 0.05 });
    }
    const s = m.snapshot();
    expect(s.stallSeconds).toBe(0);
    expect(s.bufferingRatio).toBe(0);
    expect(s.stallCount).toBe(0);
  });

  it('counts only the time a thin buffer made the playhead wait', () => {
    // Low for 1 s, in which the playhead waits 300 ms for a late chunk: one stall of 300 ms.
    const m = new PlaybackMetrics();
    m.startRequested(0);
    const base = { ended: false, paused: false, eos: false, rendition: 0, bitrateBps: 1e6 };
    m.sample({ ...base, t: 0, currentTime: 0, bufferAhead: 1 });
    m.sample({ ...base, t: 1000, currentTime: 1, bufferAhead: 0.05 });
    for (let t = 1025; t <= 2000; t += 25) {
      const played = t <= 1350 ? Math.min(t - 1000, 50) : 50 + (t - 1350);
      m.sample({ ...base, t, currentTime: 1 + played / 1000, bufferAhead: t < 2000 ? 0.05 : 1 });
    }
    const s = m.snapshot();
    expect(s.stallCount).toBe(1);
    expect(s.stallSeconds).toBeCloseTo(0.3, 6);
    expect(s.playSeconds).toBeCloseTo(1.7, 6);
    expect(s.state).toBe('playing');
  });

  it('counts startup as buffering in bufferingRatioWithStartup, not in bufferingRatio', () => {
    const p = new FakePlayer(25);
    p.metrics.startRequested(0);
    p.sampleNow();
    p.run(1000); // 1 s of startup: no media yet
    let m = p.metrics.snapshot();
    // Still starting: the whole session so far is buffering (a viewer that never starts is 1).
    expect(m.bufferingRatio).toBe(0);
    expect(m.bufferingRatioWithStartup).toBe(1);
    p.bufferEnd = 3;
    p.run(5000); // plays ~2.9 s, then stalls for the rest
    m = p.metrics.snapshot();
    const startup = (m.startupDelayMs ?? 0) / 1000;
    expect(startup).toBeCloseTo(1, 1);
    expect(m.bufferingRatio).toBeCloseTo(m.stallSeconds / (m.stallSeconds + m.playSeconds), 9);
    expect(m.bufferingRatioWithStartup).toBeCloseTo((startup + m.stallSeconds) / (startup + m.stallSeconds + m.playSeconds), 9);
    expect(m.bufferingRatioWithStartup).toBeCloseTo(3.1 / 6, 1);
  });

  it('has both ratios 0 before the play request', () => {
    const m = new PlaybackMetrics();
    m.sample({ t: 10, currentTime: 0, bufferAhead: 0, ended: false, paused: true, eos: false, rendition: null, bitrateBps: null });
    expect(m.snapshot()).toMatchObject({ bufferingRatio: 0, bufferingRatioWithStartup: 0 });
  });

  it('counts separate stalls', () => {
    const p = new FakePlayer(50);
    p.metrics.startRequested(0);
    p.bufferEnd = 1;
    p.sampleNow();
    p.run(1500);
    p.bufferEnd = 2;
    p.run(1500);
    p.bufferEnd = 20;
    p.run(1000);
    const m = p.metrics.snapshot();
    expect(m.stallCount).toBe(2);
    expect(m.stallSeconds + m.playSeconds).toBeCloseTo(4, 6);
  });

  it('does not count the viewer pausing, nor the end of a fully delivered stream', () => {
    const p = new FakePlayer(25);
    p.metrics.startRequested(0);
    p.bufferEnd = 3;
    p.duration = 3;
    p.eos = true;
    p.sampleNow();
    p.run(1000);
    p.paused = true;
    p.run(5000);
    p.paused = false;
    p.run(5000);
    const m = p.metrics.snapshot();
    expect(m.stallSeconds).toBe(0);
    expect(m.stallCount).toBe(0);
    expect(m.playSeconds).toBeCloseTo(3, 1);
    expect(m.ended).toBe(true);
    expect(m.state).toBe('ended');
  });

  it('counts the empty tail of an undelivered stream as a stall', () => {
    const p = new FakePlayer(25);
    p.metrics.startRequested(0);
    p.bufferEnd = 1;
    p.duration = 3;
    p.sampleNow();
    p.run(2000);
    expect(p.metrics.snapshot().stallCount).toBe(1);
  });

  it('counts a frozen playhead with buffer as a stall, not play', () => {
    const m = new PlaybackMetrics();
    m.startRequested(0);
    const base = { bufferAhead: 5, ended: false, paused: false, eos: false, rendition: 0, bitrateBps: 1e6 };
    m.sample({ ...base, t: 0, currentTime: 0 });
    m.sample({ ...base, t: 50, currentTime: 0.05 });
    for (let t = 100; t <= 1000; t += 50) m.sample({ ...base, t, currentTime: 0.05 });
    const s = m.snapshot();
    expect(s.playSeconds).toBeCloseTo(0.05, 6);
    expect(s.stallSeconds).toBeCloseTo(0.95, 6);
  });

  it('weights the mean bitrate by play time and counts switches', () => {
    const p = new FakePlayer(50);
    p.metrics.startRequested(0);
    p.bufferEnd = 100;
    p.sampleNow();
    p.rendition = 0;
    p.bitrateBps = 1_000_000;
    p.run(3000);
    p.rendition = 1;
    p.bitrateBps = 3_000_000;
    p.run(1000);
    p.rendition = 0;
    p.bitrateBps = 1_000_000;
    p.run(1000);
    const m = p.metrics.snapshot();
    expect(m.bitrateSwitches).toBe(2);
    // 4 s at 1000 kbit/s, 1 s at 3000 kbit/s (± one 50 ms interval at each change).
    expect(m.meanBitrateKbps).toBeGreaterThan(1350);
    expect(m.meanBitrateKbps).toBeLessThan(1450);
  });

  it('ignores samples that go back in time and uses irregular intervals honestly', () => {
    const m = new PlaybackMetrics();
    m.startRequested(0);
    const base = { ended: false, paused: false, eos: false, rendition: 0, bitrateBps: 1e6 };
    m.sample({ ...base, t: 0, currentTime: 0, bufferAhead: 1 });
    m.sample({ ...base, t: 30, currentTime: 0.03, bufferAhead: 1 });
    m.sample({ ...base, t: 530, currentTime: 0.53, bufferAhead: 0.05 }); // a late timer: 500 ms
    m.sample({ ...base, t: 400, currentTime: 0.53, bufferAhead: 0 }); // junk
    m.sample({ ...base, t: 1530, currentTime: 0.58, bufferAhead: 0 });
    const s = m.snapshot();
    // The last 1000 ms began low: the playhead played 50 ms of it.
    expect(s.playSeconds).toBeCloseTo(0.58, 6);
    expect(s.stallSeconds).toBeCloseTo(0.95, 6);
    expect(s.stallCount).toBe(1);
  });
});

describe('PlaybackMetrics and seeks', () => {
  const base = { bufferAhead: 5, ended: false, paused: false, eos: false, rendition: 0, bitrateBps: 1e6 };

  it('does not take a seek before startup for the first frame', () => {
    const m = new PlaybackMetrics();
    m.startRequested(0);
    m.sample({ ...base, t: 0, currentTime: 0, bufferAhead: 0 });
    m.noteSeek(0.033);
    m.sample({ ...base, t: 25, currentTime: 0.033 });
    expect(m.snapshot().startupDelayMs).toBeNull();
    m.sample({ ...base, t: 50, currentTime: 0.033 });
    m.sample({ ...base, t: 75, currentTime: 0.043 });
    expect(m.snapshot().startupDelayMs).toBeCloseTo(65, 6);
  });

  it('does not count a seek jump as play', () => {
    const m = new PlaybackMetrics();
    m.startRequested(0);
    m.sample({ ...base, t: 0, currentTime: 0 });
    m.sample({ ...base, t: 100, currentTime: 0.1 });
    m.noteSeek(5);
    m.sample({ ...base, t: 200, currentTime: 5 });
    m.sample({ ...base, t: 300, currentTime: 5.1 });
    expect(m.snapshot().playSeconds).toBeCloseTo(0.2, 6);
  });
});

describe('live stall threshold', () => {
  it('counts a low-latency buffer of 60 ms as playing, not stalled', () => {
    const vod = new PlaybackMetrics();
    const live = new PlaybackMetrics();
    live.setStallThreshold(LIVE_STALL_THRESHOLD_S);
    const s = { t: 0, currentTime: 0, bufferAhead: 0.06, ended: false, paused: false, eos: false, rendition: 0, bitrateBps: 1 };
    expect(vod.isLow(s)).toBe(true);
    expect(live.isLow(s)).toBe(false);
    expect(live.isLow({ ...s, bufferAhead: 0.02 })).toBe(true);
  });
});

describe('a frozen playhead', () => {
  const live = (): PlaybackMetrics => {
    const m = new PlaybackMetrics();
    m.setStallThreshold(LIVE_STALL_THRESHOLD_S);
    m.startRequested(0);
    return m;
  };
  // The browser holds the last frame with about a frame still buffered ahead: the buffer rule
  // alone sees neither play nor stall (the live server-restart case).
  const sample = (t: number, currentTime: number, extra: Partial<PlaybackSample> = {}): PlaybackSample => ({
    t, currentTime, bufferAhead: 0.034, ended: false, paused: false, eos: false, rendition: 0, bitrateBps: 1, ...extra,
  });

  it('is a stall from the last sample that moved, once frozen for FROZEN_PLAYHEAD_MS', () => {
    const m = live();
    m.sample(sample(0, 0));
    for (let t = 25; t <= 1000; t += 25) m.sample(sample(t, t / 1000));
    for (let t = 1025; t <= 4000; t += 25) m.sample(sample(t, 1));
    const s = m.snapshot();
    expect(s.stallCount).toBe(1);
    expect(s.stallSeconds).toBeCloseTo(3, 6);
    expect(s.playSeconds).toBeCloseTo(1, 6);
    expect(s.state).toBe('stalled');
    for (let t = 4025; t <= 5000; t += 25) m.sample(sample(t, 1 + (t - 4000) / 1000));
    // The interval from the last frozen sample played all of its 25 ms.
    expect(m.snapshot().stallSeconds).toBeCloseTo(3, 6);
    expect(m.snapshot().state).toBe('playing');
    expect(m.snapshot().stallCount).toBe(1);
  });

  it('is not a stall when shorter than FROZEN_PLAYHEAD_MS, paused, or seeking', () => {
    const m = live();
    m.sample(sample(0, 0));
    m.sample(sample(25, 0.025));
    m.sample(sample(50, 0.025));
    m.sample(sample(100, 0.025)); // 75 ms without moving: a late sample, not yet a freeze
    m.sample(sample(125, 0.05));
    for (let t = 150; t <= 1000; t += 25) m.sample(sample(t, 0.05, { paused: true }));
    for (let t = 1025; t <= 2000; t += 25) m.sample(sample(t, 0.05, { seeking: true }));
    const s = m.snapshot();
    expect(s.stallCount).toBe(0);
    expect(s.stallSeconds).toBe(0);
  });

  it('does not count a buffer-rule stall twice', () => {
    const m = live();
    m.sample(sample(0, 0));
    m.sample(sample(25, 0.025));
    for (let t = 50; t <= 1025; t += 25) m.sample(sample(t, 0.025, { bufferAhead: 0 }));
    for (let t = 1050; t <= 2025; t += 25) m.sample(sample(t, 0.025));
    expect(m.snapshot().stallSeconds).toBeCloseTo(2, 6);
    expect(m.snapshot().stallCount).toBe(1);
  });
});

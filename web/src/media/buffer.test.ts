import { describe, expect, it } from 'vitest';
import { MediaBuffer, type SourceBufferLike } from './buffer';
import type { Range } from './ranges';

function timeRanges(ranges: Range[]): TimeRanges {
  return {
    length: ranges.length,
    start: (i: number) => ranges[i]?.start ?? NaN,
    end: (i: number) => ranges[i]?.end ?? NaN,
  };
}

/**
 * A SourceBuffer that completes each operation asynchronously, records the operations, and
 * throws QuotaExceededError while more than `quotaS` seconds are buffered.
 */
class FakeSourceBuffer extends EventTarget implements SourceBufferLike {
  ranges: Range[] = [];
  readonly log: string[] = [];
  updating = false;
  quotaS = Infinity;
  /** Seconds of media each append adds. */
  segmentS = 2;

  get buffered(): TimeRanges {
    return timeRanges(this.ranges);
  }

  private begin(op: string, apply: () => void): void {
    if (this.updating) throw new Error(`InvalidStateError: ${op} while updating`);
    this.updating = true;
    this.log.push(op);
    setTimeout(() => {
      apply();
      this.updating = false;
      this.dispatchEvent(new Event('updateend'));
    }, 1);
  }

  appendBuffer(data: Uint8Array<ArrayBuffer>): void {
    const total = this.ranges.reduce((sum, r) => sum + r.end - r.start, 0);
    if (data.length > 1 && total + this.segmentS > this.quotaS) {
      const error = new Error('full');
      error.name = 'QuotaExceededError';
      throw error;
    }
    this.begin(`append ${data.length}`, () => {
      if (data.length <= 1) return; // an "init segment" adds no media
      const last = this.ranges[this.ranges.length - 1];
      if (last) last.end += this.segmentS;
      else this.ranges.push({ start: 0, end: this.segmentS });
    });
  }

  remove(start: number, end: number): void {
    this.begin(`remove ${start}-${end}`, () => {
      this.ranges = this.ranges
        .map((r) => ({ start: Math.max(r.start, end), end: r.end }))
        .filter((r) => r.end > r.start || r.start < start);
    });
  }

  changeType(type: string): void {
    if (this.updating) throw new Error('InvalidStateError: changeType while updating');
    this.log.push(`changeType ${type}`);
  }
}

function setup(currentTime = 0) {
  const sb = new FakeSourceBuffer();
  const video = { currentTime, error: null };
  const ms = { readyState: 'open' as ReadyState, endOfStream: () => sb.log.push('endOfStream') };
  let clock = 0;
  const buffer = new MediaBuffer(video, ms, sb, 'video/mp4; codecs="a"', {
    isTypeSupported: (mime) => mime !== 'video/unsupported',
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
      video.currentTime += ms / 1000; // playback goes on while we wait
      await Promise.resolve();
    },
  });
  return { sb, video, buffer };
}

const seg = (n = 100): Uint8Array<ArrayBuffer> => new Uint8Array(n);

describe('MediaBuffer', () => {
  it('serialises appends: each waits for the previous updateend', async () => {
    const { sb, buffer } = setup();
    await Promise.all([buffer.append(seg(1)), buffer.append(seg(100)), buffer.append(seg(101))]);
    expect(sb.log).toEqual(['append 1', 'append 100', 'append 101']);
    expect(buffer.ranges()).toEqual([{ start: 0, end: 4 }]);
    expect(buffer.appendedBytes).toBe(202);
  });

  it('switches type before a new init segment, only when it differs', async () => {
    const { sb, buffer } = setup();
    await buffer.append(seg(1), 'video/mp4; codecs="a"');
    await buffer.append(seg(1), 'video/mp4; codecs="b"');
    expect(sb.log).toEqual(['append 1', 'changeType video/mp4; codecs="b"', 'append 1']);
    await expect(buffer.append(seg(1), 'video/unsupported')).rejects.toThrow(/does not support/);
  });

  it('evicts media more than 10 s behind the playhead before appending', async () => {
    const { sb, buffer, video } = setup();
    for (let i = 0; i < 10; i++) await buffer.append(seg());
    video.currentTime = 15;
    await buffer.append(seg());
    expect(sb.log.filter((op) => op.startsWith('remove'))).toEqual(['remove 0-5']);
    expect(buffer.ranges()).toEqual([{ start: 5, end: 22 }]);
    expect(buffer.evictions).toBe(1);
  });

  it('on QuotaExceededError evicts down to 1 s behind and retries', async () => {
    const { sb, buffer, video } = setup();
    for (let i = 0; i < 5; i++) await buffer.append(seg());
    sb.quotaS = 10;
    video.currentTime = 6; // 0-6 played; only 4 s are more than 1 s... behind: remove 0-5
    await buffer.append(seg());
    expect(sb.log.filter((op) => op.startsWith('remove'))).toEqual(['remove 0-5']);
    expect(buffer.ranges()).toEqual([{ start: 5, end: 12 }]);
  });

  it('on QuotaExceededError with nothing to evict, waits for playback to free room', async () => {
    const { sb, buffer, video } = setup();
    for (let i = 0; i < 5; i++) await buffer.append(seg());
    sb.quotaS = 10;
    video.currentTime = 0.5;
    await buffer.append(seg());
    expect(video.currentTime).toBeGreaterThan(2.5); // it slept until 2 s could go
    expect(buffer.ranges()[0]?.end).toBe(12);
  });

  it('gives up on a buffer that stays full', async () => {
    const { sb, buffer } = setup();
    await buffer.append(seg());
    sb.quotaS = 1;
    await expect(buffer.append(seg())).rejects.toThrow(/QuotaExceededError/);
  });

  it('propagates other errors and keeps the queue usable', async () => {
    const { sb, buffer } = setup();
    sb.updating = true; // the next operation throws InvalidStateError synchronously
    await expect(buffer.append(seg())).rejects.toThrow(/InvalidStateError/);
    sb.updating = false;
    await buffer.append(seg());
    expect(buffer.ranges()).toEqual([{ start: 0, end: 2 }]);
  });

  it('ends the stream after queued operations', async () => {
    const { sb, buffer } = setup();
    void buffer.append(seg(1), 'video/mp4; codecs="b"');
    void buffer.append(seg());
    await buffer.endOfStream();
    expect(sb.log).toEqual(['changeType video/mp4; codecs="b"', 'append 1', 'append 100', 'endOfStream']);
  });
});

import { describe, expect, it } from 'vitest';
import { STARTUP_PHASES, StartupTimeline } from './startup';

describe('StartupTimeline', () => {
  it('is all null before the play request', () => {
    const t = new StartupTimeline();
    t.mark('sessionReadyMs', 120);
    const s = t.snapshot();
    expect(Object.keys(s)).toEqual([...STARTUP_PHASES]);
    expect(Object.values(s).every((v) => v === null)).toBe(true);
  });

  it('reports steps as ms since the play request, earliest report winning', () => {
    const t = new StartupTimeline();
    t.playRequested(1000);
    t.mark('sessionReadyMs', 1180.04);
    t.mark('firstByteMs', 1300); // the segment's first byte
    t.mark('firstByteMs', 1270); // the init segment's, reported later
    t.mark('firstByteMs', Number.NaN);
    const s = t.snapshot();
    expect(s.sessionReadyMs).toBe(180);
    expect(s.firstByteMs).toBe(270);
    expect(s.firstFrameMs).toBeNull();
  });

  it('keeps the first play request and shows work done before it as negative', () => {
    const t = new StartupTimeline();
    t.mark('configReadyMs', 40);
    t.playRequested(500);
    t.playRequested(900);
    expect(t.snapshot().configReadyMs).toBe(-460);
    expect(t.has('configReadyMs')).toBe(true);
    expect(t.has('firstFrameMs')).toBe(false);
  });

  it('takes the first frame presented at or after the play request', () => {
    const t = new StartupTimeline();
    expect(t.frameShown(10)).toBe(false); // no play request yet
    t.playRequested(100);
    expect(t.frameShown(90)).toBe(false); // a frame shown before the play request
    expect(t.frameShown(400)).toBe(true);
    expect(t.snapshot().firstFrameMs).toBe(300);
  });
});

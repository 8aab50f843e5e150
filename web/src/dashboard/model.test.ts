import { describe, expect, it } from 'vitest';
import { CHARTS, DashboardModel, LATENCY_CHART, type PlayerRecord } from './model';
import { Recording, SessionClock, parseRecording } from './recording';
import { parseDashboardParams } from './index';
import type { TelemetryRecord } from '../protocol/telemetry';

const hello: TelemetryRecord = { type: 'hello', session_id: '0', cc: 'vivace', cc_params: {}, server_version: 'x', t0_us: 1_700_000_000_000_000 };
const sample = (t: number, extra: Record<string, number> = {}): TelemetryRecord => ({
  type: 'sample',
  t_ms: t,
  cwnd_bytes: 30000,
  pacing_rate_bps: 3e6,
  srtt_ms: 35,
  min_rtt_ms: 30,
  latest_rtt_ms: 33,
  bytes_in_flight: 12000,
  delivery_rate_bps: 2.5e6,
  bytes_sent: t * 100,
  bytes_lost: 0,
  state: t < 200 ? 'starting' : 'probing',
  ...extra,
});
const mi = (t: number, state: string, rate: number, utility: number | null): TelemetryRecord => ({
  type: 'mi',
  t_ms: t,
  target_rate_bps: rate,
  send_rate_bps: rate * 0.98,
  delivery_rate_bps: rate * 0.97,
  rtt_ms: 34,
  rtt_gradient_raw: 0.01,
  rtt_gradient: 0.005,
  loss: 0.01,
  utility,
  state,
  decision: 'x',
  step_bps: 0,
});
const link = (t: number): TelemetryRecord => ({ type: 'link', t_ms: t, capacity_bps: 12e6, queue_bytes: 3000, queue_packets: 2, base_rtt_ms: 30, loss: 0 });
const player = (t: number, state: string, buffer = 5): PlayerRecord => ({
  type: 'player',
  t_ms: t,
  buffer_s: buffer,
  bitrate_kbps: 1500,
  state,
  current_time: t / 1000,
  dropped_frames: 0,
  total_frames: 10,
});

function session(): (TelemetryRecord | PlayerRecord)[] {
  const out: (TelemetryRecord | PlayerRecord)[] = [hello];
  for (let t = 100; t <= 3000; t += 100) {
    const p = player(t + 5, t >= 1500 && t < 2000 ? 'stalled' : 'playing');
    // live ABR switches: up by throughput, down by the latency guard
    if (t === 1000) Object.assign(p, { abr_switch_kbps: 2500, abr_switch_reason: 'throughput' });
    if (t === 2500) Object.assign(p, { abr_switch_kbps: 750, abr_switch_reason: 'latency' });
    out.push(sample(t), link(t), p);
  }
  out.push(mi(150, 'starting', 1e6, 1.5), mi(250, 'probing', 2.1e6, 3), mi(350, 'probing', 1.9e6, 2), mi(450, 'probing', 1.9e6, 2.5), mi(550, 'probing', 2.1e6, 2.2), mi(650, 'moving', 2.2e6, 3.3));
  out.push(mi(750, 'moving', 2.3e6, null));
  return out;
}

describe('DashboardModel', () => {
  it('fills every series of a PCC session through an emulator', () => {
    const m = new DashboardModel();
    for (const r of session()) m.ingest(r);
    const points = m.points();
    const empty = Object.entries(points).filter(([, n]) => n === 0);
    expect(empty).toEqual([]);
    expect(Object.keys(points)).toHaveLength(CHARTS.reduce((n, c) => n + c.series.length, 0));
    expect(points['rate/link capacity']).toBe(30);
    expect(points['rate/pacing rate']).toBe(30);
    expect(points['rate/MI target rate']).toBe(7);
    expect(points['utility/utility']).toBe(2); // starting + moving; the null utility is not a point
    expect(points['utility/probe ▲ (higher rate)']).toBe(2);
    expect(points['utility/probe ▼ (lower rate)']).toBe(2);
    expect(points['loss/loss per sample']).toBe(29); // from the second sample on
    expect(points['player/ABR switch: throughput']).toBe(1);
    expect(points['player/ABR switch: latency, loss or buffer']).toBe(1);
  });

  it('puts t_ms on seconds since the origin, in Mbit/s and kB', () => {
    const m = new DashboardModel();
    m.ingest(hello);
    m.ingest(sample(2500));
    const rate = m.tables.rate;
    expect(rate.x).toEqual([2.5]);
    expect(rate.columns[1]).toEqual([3]);
    expect(m.tables.window.columns[0]).toEqual([30]);
    // A common origin 1 s before the session's t0 shifts everything by 1 s.
    const shifted = new DashboardModel(hello['t0_us'] as number / 1000 - 1000);
    shifted.ingest(hello);
    shifted.ingest(sample(2500));
    expect(shifted.tables.rate.x).toEqual([3.5]);
  });

  it('ignores records before hello and unknown types', () => {
    const m = new DashboardModel();
    m.ingest(sample(100));
    m.ingest(hello);
    m.ingest({ type: 'future', t_ms: 5 });
    expect(m.tables.rate.length).toBe(0);
    expect(m.counts).toEqual({ sample: 1, hello: 1, future: 1 });
  });

  it('turns stalled player samples into shaded intervals', () => {
    const m = new DashboardModel();
    for (const r of session()) m.ingest(r);
    expect(m.stalls).toHaveLength(1);
    expect(m.stalls[0]!.start).toBeCloseTo(1.505, 6);
    expect(m.stalls[0]!.end).toBeCloseTo(2.005, 6);
  });

  it('names controller states on a categorical axis', () => {
    const m = new DashboardModel();
    for (const r of session()) m.ingest(r);
    expect(m.stateNames).toEqual(['starting', 'probing', 'moving']);
    expect(m.tables.state.columns[1]!.filter((v) => v !== null)).toEqual([0, 1, 1, 1, 1, 2, 2]);
    expect(m.tables.state.points(0)).toBe(30); // the samples' state, 10 Hz
  });
});

describe('DashboardModel latency (mode=live)', () => {
  const live = (t: number, latency: number | null, media: number | null): PlayerRecord => ({ ...player(t, 'playing'), latency_ms: latency, media_latency_ms: media, target_latency_ms: 1000 });

  it('has no latency chart in the VOD modes', () => {
    const m = new DashboardModel();
    for (const r of session()) m.ingest(r);
    expect(m.charts.map((c) => c.id)).not.toContain('latency');
    expect(Object.keys(m.points()).some((k) => k.startsWith('latency/'))).toBe(false);
  });

  it('draws glass-to-glass, playhead and target latency after the RTT chart', () => {
    const m = new DashboardModel();
    m.enableLatency();
    expect(m.charts.map((c) => c.id).slice(0, 3)).toEqual(['rate', 'rtt', 'latency']);
    m.ingest(hello);
    m.ingest(live(1000, null, null)); // before the first frame: the target only
    m.ingest(live(1100, 1043.5, 1120));
    m.ingest(live(1200, 1010, 1090));
    const points = m.points();
    expect(points['latency/glass-to-glass']).toBe(2);
    expect(points['latency/playhead behind live']).toBe(2);
    expect(points['latency/target latency']).toBe(3);
    expect(m.tables.latency.data()).toEqual([
      [1, 1.1, 1.2],
      [null, 1043.5, 1010],
      [null, 1120, 1090],
      [1000, 1000, 1000],
    ]);
    expect(LATENCY_CHART.series.map((s) => s.label)).toEqual(['glass-to-glass', 'playhead behind live', 'target latency']);
  });

  it('a replayed live recording shows the latency chart with the same points', () => {
    const rec = new Recording();
    const original = new DashboardModel();
    original.enableLatency();
    for (const r of [hello, live(100, 900, 950), live(200, 905, 940)]) {
      rec.add(r);
      original.ingest(r);
    }
    const replayed = new DashboardModel();
    for (const r of parseRecording(rec.toJsonLines({ page: 'x', playerVersion: 'y' })).records) replayed.ingest(r);
    expect(replayed.latencyEnabled).toBe(true);
    expect(replayed.points()).toEqual(original.points());
  });
});

describe('Recording', () => {
  it('round-trips through JSON Lines and replays to the same points', () => {
    const rec = new Recording();
    const live = new DashboardModel();
    for (const r of session()) {
      rec.add(r);
      live.ingest(r);
    }
    const text = rec.toJsonLines({ page: 'http://x/', playerVersion: '1' });
    const lines = text.trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ type: 'recording', format: 'pccstream-recording', version: 1 });
    const parsed = parseRecording(text + 'not json\n[1]\n');
    expect(parsed.badLines).toEqual([lines.length + 1, lines.length + 2]);
    expect(parsed.header?.page).toBe('http://x/');
    const replayed = new DashboardModel();
    for (const r of parsed.records) replayed.ingest(r);
    expect(replayed.points()).toEqual(live.points());
  });

  it('keeps hello when the ring wraps', () => {
    const rec = new Recording(5);
    rec.add(hello);
    for (let t = 0; t < 20; t++) rec.add(sample(t));
    const records = rec.records();
    expect(records[0]).toBe(hello);
    expect(records).toHaveLength(6);
    expect(rec.toJsonLines({ page: '', playerVersion: '' })).toContain('"dropped":15');
  });
});

describe('SessionClock', () => {
  it('uses the shared wall clock when it is plausible', () => {
    const c = new SessionClock(1_000_000_000, 1_000_020); // hello seen 20 ms after t0
    expect(c.skewMs).toBe(20);
    expect(c.tMs(1_000_500)).toBe(500);
  });
  it('falls back to the hello arrival when the clocks disagree', () => {
    const c = new SessionClock(1_000_000_000, 1_060_000);
    expect(c.tMs(1_060_500)).toBe(500);
  });
});

describe('parseDashboardParams', () => {
  it('accepts the documented parameters', () => {
    const { params, errors } = parseDashboardParams('dashboard=0&replay=/recordings/a.jsonl&origin=1700000000000&window=30');
    expect(errors).toEqual([]);
    expect(params).toEqual({ show: false, replay: '/recordings/a.jsonl', originMs: 1700000000000, windowS: 30, compact: false });
  });
  it('reports bad values', () => {
    const { errors } = parseDashboardParams('dashboard=maybe&origin=yesterday&window=-1&replay=&compact=2');
    expect(errors).toHaveLength(5);
  });
});

import type { TelemetryRecord } from '../protocol/telemetry';
import { Dashboard } from './charts';
import { DashboardModel, type PlayerRecord } from './model';
import { Recording, SessionClock, pageEpochMs, parseRecording, type AnyRecord } from './recording';

export { parseRecording } from './recording';

/** Player sampling period for the dashboard: the same 10 Hz as the server's samples. */
export const PLAYER_SAMPLE_MS = 100;

export interface DashboardParams {
  /** Draw the charts (`dashboard=0` hides them; data is still recorded). */
  show: boolean;
  /** Replay a recording from this URL instead of playing. */
  replay: string | null;
  /** Common time origin, epoch ms (the compare view gives both sessions the same). */
  originMs: number | null;
  /** Seconds of history in the live view (0: all). */
  windowS: number | null;
  /** Compact layout (the compare view): small video, no metrics table, small charts. */
  compact: boolean;
}

export const DASHBOARD_PARAM_NAMES = ['dashboard', 'replay', 'origin', 'window', 'compact'] as const;

export function parseDashboardParams(search: string | URLSearchParams): { params: DashboardParams; errors: string[] } {
  const q = typeof search === 'string' ? new URLSearchParams(search) : search;
  const errors: string[] = [];
  const params: DashboardParams = { show: true, replay: null, originMs: null, windowS: null, compact: false };
  const compact = q.get('compact');
  if (compact !== null) {
    if (compact === '1' || compact === 'true') params.compact = true;
    else if (compact !== '0' && compact !== 'false') errors.push(`compact: expected 1 or 0, got ${JSON.stringify(compact)}`);
  }
  const show = q.get('dashboard');
  if (show !== null) {
    if (show === '1' || show === 'true') params.show = true;
    else if (show === '0' || show === 'false') params.show = false;
    else errors.push(`dashboard: expected 1 or 0, got ${JSON.stringify(show)}`);
  }
  const replay = q.get('replay');
  if (replay !== null) {
    if (replay.trim() === '') errors.push('replay: expected the URL of a recording');
    else params.replay = replay;
  }
  const origin = q.get('origin');
  if (origin !== null) {
    const v = Number(origin);
    if (!/^\d+(\.\d+)?$/.test(origin) || !Number.isFinite(v)) errors.push(`origin: expected epoch milliseconds, got ${JSON.stringify(origin)}`);
    else params.originMs = v;
  }
  const window = q.get('window');
  if (window !== null) {
    const v = Number(window);
    if (!/^\d+(\.\d+)?$/.test(window) || v > 86400) errors.push(`window: expected seconds (0: whole session), got ${JSON.stringify(window)}`);
    else params.windowS = v;
  }
  return { params, errors };
}

/** What the page samples for the player's own series. */
export interface PlayerProbe {
  bufferS(): number;
  bitrateKbps(): number | null;
  state(): string;
  currentTime(): number;
  quality(): { dropped: number; total: number } | null;
  /** Live mode: the latencies (ms) recorded with every sample and drawn in the latency chart. */
  latency?(): { latencyMs: number | null; mediaLatencyMs: number | null; targetLatencyMs: number | null };
  /** Live ABR: how many switches so far, and the last one (recorded once with the next sample). */
  abrSwitches?(): { count: number; last: { toKbps: number; reason: string } | null };
}

export interface DashboardSnapshot {
  visible: boolean;
  paused: boolean;
  mode: 'live' | 'replay';
  records: Record<string, number>;
  points: Record<string, number>;
  stalls: number;
  renders: number;
  /** Main-thread ms spent redrawing: total and the longest single redraw. */
  renderMs: number;
  renderMsMax: number;
  clockSkewMs: number | null;
}

/**
 * Glue: telemetry and player records → model + recording; the charts on top. Live: call
 * `onTelemetry` for every record as it arrives and `startPlayerSampling`. Replay: `replay`.
 */
export class DashboardController {
  model: DashboardModel;
  recording = new Recording();
  view: Dashboard | null = null;
  clock: SessionClock | null = null;
  mode: 'live' | 'replay' = 'live';
  private timer: ReturnType<typeof setInterval> | null = null;
  private mountedCharts: string | null = null;
  private mountedTitle: string | undefined;
  private abrSwitchesSeen = 0;

  constructor(
    private readonly root: HTMLElement,
    readonly params: DashboardParams,
    private readonly meta: { playerVersion: string },
  ) {
    this.model = new DashboardModel(params.originMs);
  }

  mount(title?: string): void {
    this.view?.stop();
    this.mountedCharts = this.model.chartsKey;
    this.mountedTitle = title;
    const options = {
      live: this.mode === 'live',
      compact: this.params.compact,
      onDownload: () => this.download(),
      onUserRange: (range: { min: number; max: number } | null) => {
        // Inside the compare view: tell the other side (compare.ts relays it).
        if (window.parent !== window) window.parent.postMessage({ pccstream: 'view', range }, location.origin);
      },
      ...(this.params.windowS !== null ? { windowS: this.params.windowS } : {}),
      ...(title !== undefined ? { title } : {}),
    };
    this.view = new Dashboard(this.root, this.model, options);
    this.view.setVisible(this.params.show);
    this.view.start();
  }

  /** Messages relayed by the compare view. */
  listenForPeers(): void {
    window.addEventListener('message', (event) => {
      if (event.origin !== location.origin) return;
      const data = event.data as { pccstream?: string; range?: { min: number; max: number } | null } | null;
      if (!data || data.pccstream !== 'view') return;
      this.view?.applyRange(data.range ?? null);
    });
  }

  onTelemetry(record: TelemetryRecord): void {
    if (record.type === 'hello' && this.clock === null) {
      const t0 = record['t0_us'];
      if (typeof t0 === 'number') this.clock = new SessionClock(t0, pageEpochMs());
    }
    this.take(record);
  }

  private take(record: AnyRecord): void {
    this.recording.add(record);
    this.model.ingest(record);
    // The charts depend on the session's controller, known from `hello` on: rebuild once.
    if (this.view !== null && this.mountedCharts !== this.model.chartsKey) this.mount(this.mountedTitle);
  }

  startPlayerSampling(probe: PlayerProbe): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      if (this.clock === null) return; // no session clock before `hello`
      const q = probe.quality();
      const record: PlayerRecord = {
        type: 'player',
        t_ms: Math.round(this.clock.tMs(pageEpochMs()) * 10) / 10,
        buffer_s: Math.round(probe.bufferS() * 1000) / 1000,
        bitrate_kbps: probe.bitrateKbps(),
        state: probe.state(),
        current_time: Math.round(probe.currentTime() * 1000) / 1000,
        dropped_frames: q?.dropped ?? null,
        total_frames: q?.total ?? null,
      };
      const latency = probe.latency?.();
      if (latency !== undefined) {
        const ms = (v: number | null): number | null => (v === null ? null : Math.round(v * 10) / 10);
        record.latency_ms = ms(latency.latencyMs);
        record.media_latency_ms = ms(latency.mediaLatencyMs);
        record.target_latency_ms = latency.targetLatencyMs;
      }
      const switches = probe.abrSwitches?.();
      if (switches !== undefined && switches.last !== null && switches.count > this.abrSwitchesSeen) {
        this.abrSwitchesSeen = switches.count;
        record.abr_switch_kbps = switches.last.toKbps;
        record.abr_switch_reason = switches.last.reason;
      }
      this.take(record);
    }, PLAYER_SAMPLE_MS);
  }

  stopPlayerSampling(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Replace everything with a recording's records and draw them whole. */
  replay(text: string, source: string): { records: number; badLines: number[] } {
    this.stopPlayerSampling();
    const parsed = parseRecording(text);
    this.mode = 'replay';
    this.view?.stop();
    this.view = null; // mounted once, after every record is in
    this.model = new DashboardModel(this.params.originMs);
    this.recording = new Recording(Math.max(parsed.records.length + 1, 1));
    for (const r of parsed.records) this.take(r);
    const cc = this.model.hello?.['cc'];
    this.mount(`Replay of ${source}${typeof cc === 'string' ? ` (cc=${cc})` : ''}`);
    return { records: parsed.records.length, badLines: parsed.badLines };
  }

  jsonLines(): string {
    return this.recording.toJsonLines({
      page: location.href,
      playerVersion: this.meta.playerVersion,
      extra: { clock_skew_ms: this.clock?.skewMs ?? null },
    });
  }

  download(): void {
    const blob = new Blob([this.jsonLines()], { type: 'application/x-ndjson' });
    const a = document.createElement('a');
    const cc = this.model.hello?.['cc'];
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    a.href = URL.createObjectURL(blob);
    a.download = `pccstream-${typeof cc === 'string' ? cc : 'session'}-${stamp}.jsonl`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }

  snapshot(): DashboardSnapshot {
    return {
      visible: this.view?.visible ?? false,
      paused: this.view?.paused ?? false,
      mode: this.mode,
      records: { ...this.model.counts },
      points: this.model.points(),
      stalls: this.model.stalls.length,
      renders: this.view?.renders ?? 0,
      renderMs: this.view?.renderMs ?? 0,
      renderMsMax: this.view?.renderMsMax ?? 0,
      clockSkewMs: this.clock?.skewMs ?? null,
    };
  }

  setVisible(visible: boolean): void {
    this.params.show = visible;
    this.view?.setVisible(visible);
  }
}

import { Dashboard } from '../dashboard/charts';
import type { DashboardParams, DashboardSnapshot } from '../dashboard';
import { WebrtcDashboardModel } from './dashboard-model';

/**
 * The WebRTC receiver's dashboard: WebrtcDashboardModel drawn by the player dashboard's chart
 * code, zooms mirrored through the compare view like the player pages'.
 */
export class WebrtcDashboard {
  readonly model: WebrtcDashboardModel;
  readonly view: Dashboard;

  constructor(root: HTMLElement, params: DashboardParams, originMs: number, describe: () => string) {
    this.model = new WebrtcDashboardModel(originMs);
    this.view = new Dashboard(root, this.model, {
      live: true,
      compact: params.compact,
      title: 'WebRTC dashboard (libwebrtc: GCC, jitter buffer)',
      describe,
      onUserRange: (range) => {
        if (window.parent !== window) window.parent.postMessage({ pccstream: 'view', range }, location.origin);
      },
      ...(params.windowS !== null ? { windowS: params.windowS } : {}),
    });
    window.addEventListener('message', (event) => {
      if (event.origin !== location.origin) return;
      const data = event.data as { pccstream?: string; range?: { min: number; max: number } | null } | null;
      if (!data || data.pccstream !== 'view') return;
      this.view.applyRange(data.range ?? null);
    });
    this.view.setVisible(params.show);
    this.view.start();
  }

  snapshot(): DashboardSnapshot {
    return {
      visible: this.view.visible,
      paused: this.view.paused,
      mode: 'live',
      records: { ...this.model.counts },
      points: this.model.points(),
      stalls: this.model.stalls.length,
      renders: this.view.renders,
      renderMs: this.view.renderMs,
      renderMsMax: this.view.renderMsMax,
      clockSkewMs: null,
    };
  }
}

import './style.css';

/**
 * The compare view: two player pages side by side in iframes, `?a=QUERY&b=QUERY` (each the
 * query string of a player page, e.g. `cc=vivace&server=https://127.0.0.1:5555/stream`).
 * Both get the same `origin` (this page's load time, epoch ms), so their dashboards share one
 * time axis; a zoom in one side is mirrored to the other.
 *
 * A side whose query has `mode=webrtc` is the WebRTC arm: its page is the WebRTC receiver
 * (webrtc-recv.html, which embeds its sender when the query has `sender=`, as `pccstream demo`
 * gives it) with its own dashboard on the same axis.
 */

const statusEl = document.querySelector('#compare-status') as HTMLElement;
const errorEl = document.querySelector('#compare-error') as HTMLElement;
const root = document.querySelector('#compare') as HTMLElement;

const query = new URLSearchParams(window.location.search);
const origin = Math.round(performance.timeOrigin);
const sides: { name: string; frame: HTMLIFrameElement }[] = [];

for (const name of ['a', 'b'] as const) {
  const text = query.get(name);
  if (text === null) {
    errorEl.textContent = 'Error: the compare view needs ?a=PLAYER_QUERY&b=PLAYER_QUERY';
    errorEl.hidden = false;
    continue;
  }
  const params = new URLSearchParams(text);
  params.set('origin', String(origin));
  if (!params.has('compact')) params.set('compact', '1');
  const column = document.createElement('section');
  column.className = 'compare-side';
  const webrtc = params.get('mode') === 'webrtc';
  const title = document.createElement('h2');
  const what = webrtc ? 'webrtc (libwebrtc: GCC, jitter buffer)' : (params.get('cc') ?? 'server default');
  title.textContent = `${name.toUpperCase()}: ${what}${params.get('mode') === 'live' ? ' (live)' : ''}`;
  const frame = document.createElement('iframe');
  frame.title = `session ${name.toUpperCase()}`;
  frame.name = `side-${name}`;
  frame.allow = 'autoplay';
  frame.src = `./${webrtc ? 'webrtc-recv.html' : 'index.html'}?${params.toString()}`;
  column.append(title, frame);
  root.appendChild(column);
  sides.push({ name, frame });
}
statusEl.textContent = `${sides.length} sessions, time axes from ${new Date(origin).toISOString()}`;

// Mirror zoom/pause messages between the two sides.
window.addEventListener('message', (event) => {
  const data = event.data as { pccstream?: string } | null;
  if (!data || typeof data !== 'object' || data.pccstream !== 'view') return;
  for (const side of sides) {
    if (side.frame.contentWindow && side.frame.contentWindow !== event.source) side.frame.contentWindow.postMessage(data, window.location.origin);
  }
});

/**
 * Client of the server's signalling rooms (`/api/webrtc/ROOM/...`, shared/PROTOCOL.md):
 * non-trickle offer/answer with long polls.
 */

export interface Offer {
  offer_id: number;
  type: 'offer';
  sdp: string;
  meta: Record<string, unknown>;
}

/** What the sender tells the receiver besides its SDP. */
export interface SenderMeta {
  /** Wall-clock ms of frame code 0 (codes are ms since then, mod 2^24). */
  epochMs: number;
  fps: number;
  width: number;
  height: number;
  rendition: string;
}

/** Seconds each long poll waits (the server allows up to 25). */
export const POLL_WAIT_S = 20;

async function failure(response: Response, what: string): Promise<Error> {
  let reason = `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { error?: unknown };
    if (typeof body.error === 'string') reason += `: ${body.error}`;
  } catch {
    // not JSON: the status says enough
  }
  return new Error(`${what}: ${reason}`);
}

export class SignallingClient {
  private readonly base: string;

  constructor(room: string, base = '/api/webrtc/') {
    this.base = `${base}${encodeURIComponent(room)}`;
  }

  async postOffer(sdp: string, meta: SenderMeta): Promise<number> {
    const response = await fetch(`${this.base}/offer`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'offer', sdp, meta }),
    });
    if (!response.ok) throw await failure(response, 'posting the offer');
    return ((await response.json()) as { offer_id: number }).offer_id;
  }

  async waitOffer(signal?: AbortSignal): Promise<Offer> {
    for (;;) {
      const response = await fetch(`${this.base}/offer?wait=${POLL_WAIT_S}`, { cache: 'no-store', signal: signal ?? null });
      if (response.status === 200) return (await response.json()) as Offer;
      if (response.status !== 204) throw await failure(response, 'waiting for the offer');
    }
  }

  async postAnswer(offerId: number, sdp: string): Promise<void> {
    const response = await fetch(`${this.base}/answer`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'answer', sdp, offer_id: offerId }),
    });
    if (!response.ok) throw await failure(response, 'posting the answer');
  }

  async waitAnswer(offerId: number, signal?: AbortSignal): Promise<string> {
    for (;;) {
      const response = await fetch(`${this.base}/answer?offer_id=${offerId}&wait=${POLL_WAIT_S}`, { cache: 'no-store', signal: signal ?? null });
      if (response.status === 200) return ((await response.json()) as { sdp: string }).sdp;
      if (response.status !== 204) throw await failure(response, 'waiting for the answer');
    }
  }
}

/** Resolves when ICE gathering is complete (non-trickle: the SDP then has every candidate). */
export function iceGatheringComplete(pc: RTCPeerConnection, timeoutMs = 10_000): Promise<void> {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ICE gathering did not complete in ${timeoutMs / 1000} s (is the TURN server reachable?)`)), timeoutMs);
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

/** Number of relay candidates in an SDP (0 means the TURN server gave us nothing). */
export function relayCandidates(sdp: string): number {
  return sdp.split(/\r?\n/).filter((line) => line.startsWith('a=candidate:') && / typ relay /.test(line)).length;
}

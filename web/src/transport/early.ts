/**
 * The WebTransport session index.html opens before the player's modules have loaded (VOD
 * autoplay): its inline script builds the session URL the way boot.ts would for valid
 * parameters and starts the session as soon as /api/config answers. The player adopts it only
 * when the URL is exactly the one it would open itself, and closes it otherwise, so a wrong
 * guess costs the head start, never correctness.
 */

export interface EarlySession {
  url: string;
  /** The certificate hash it was opened with. */
  certHash: Uint8Array;
  /** Page clock when `new WebTransport()` was called. */
  startMs: number;
  transport: WebTransport;
}

/**
 * The early session if it was opened to `url` with `certHash` (the caller takes it once), else
 * null; one opened otherwise is closed. `started` is index.html's promise (null/undefined: none
 * was started).
 */
export async function takeEarlySession(
  url: string,
  certHash: Uint8Array | null,
  started: Promise<EarlySession | null> | null | undefined,
): Promise<EarlySession | null> {
  if (!started) return null;
  let early: EarlySession | null;
  try {
    early = await started;
  } catch {
    return null; // /api/config failed or the guess threw: the player connects itself
  }
  if (early === null) return null;
  if (early.url === url && certHash !== null && sameBytes(early.certHash, certHash)) return early;
  closeQuietly(early.transport);
  return null;
}

/** Close the early session, if any: the player will not use it (e.g. no autoplay after all). */
export function discardEarlySession(started: Promise<EarlySession | null> | null | undefined): void {
  started?.then((early) => early && closeQuietly(early.transport)).catch(() => undefined);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function closeQuietly(transport: WebTransport): void {
  try {
    transport.close({ closeCode: 0, reason: 'not the session the player wants' });
  } catch {
    // already closed or failed
  }
}

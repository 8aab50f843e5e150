/** How errors are described to people: one definition for the page, transport and players. */

/** The fields a WebTransportError adds to Error. */
type TransportErrorFields = Error & { source?: string; streamErrorCode?: number | null };

/** An Error's message (or its name when the message is empty); anything else as a string. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/** The stream error code a WebTransportError carries, else null. */
export function streamErrorCode(error: unknown): number | null {
  return error instanceof Error ? ((error as TransportErrorFields).streamErrorCode ?? null) : null;
}

/** `errorMessage` plus a WebTransportError's `source` ('session' | 'stream') and stream code. */
export function transportErrorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const parts = [errorMessage(error)];
  const source = (error as TransportErrorFields).source;
  if (source) parts.push(`source=${source}`);
  const code = streamErrorCode(error);
  if (code !== null) parts.push(`code=${code}`);
  return parts.join(', ');
}

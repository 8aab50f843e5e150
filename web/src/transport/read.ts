/** Helpers over a ReadableStream of bytes (WebTransport streams). */

/**
 * Read the next chunk; a zero-length chunk is skipped. `null` at the end of the stream.
 */
export async function nextChunk(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Uint8Array | null> {
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return null;
    if (value.length > 0) return value;
  }
}

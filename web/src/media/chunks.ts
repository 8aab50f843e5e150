/**
 * CMAF chunks of a media segment as its bytes arrive: a chunk ends with each top-level `mdat`
 * (the boxes before a `moof` — styp, sidx, prft, emsg — travel with it), so each one can be
 * appended to MSE as soon as it is complete. The same rule as the server's
 * `pccstream.media.mp4.read_chunks`; both check shared/vectors/cmaf-chunks.json.
 */

import { ByteQueue } from '../protocol/byte-queue';

const MDAT = 0x6d646174; // 'mdat'

export class CmafChunkParser {
  private readonly pending = new ByteQueue();
  /** Bytes of complete boxes at the start of `pending` (the chunk so far). */
  private boxed = 0;
  /** Body bytes seen so far (for error messages). */
  private offset = 0;

  /** Size and type of the box after `boxed` once its header is in (a big mdat arrives in
   * many pieces: its header is read once). */
  private box: { size: number; type: number } | null = null;

  /** Feed the next bytes; returns the chunks they completed, oldest first. */
  push(bytes: Uint8Array): Uint8Array<ArrayBuffer>[] {
    this.pending.push(bytes);
    const out: Uint8Array<ArrayBuffer>[] = [];
    for (;;) {
      const available = this.pending.length - this.boxed;
      if (this.box === null) {
        if (available < 8) break;
        let size = this.pending.uint(this.boxed, 4);
        const type = this.pending.uint(this.boxed + 4, 4);
        let header = 8;
        if (size === 1) {
          if (available < 16) break;
          size = this.pending.uint(this.boxed + 8, 8);
          header = 16;
        } else if (size === 0) {
          throw new Error(`segment byte ${this.offset + this.boxed}: a box of size 0 (to the end) cannot be streamed`);
        }
        if (size < header) throw new Error(`segment byte ${this.offset + this.boxed}: box size ${size} is smaller than its header`);
        this.box = { size, type };
      }
      if (available < this.box.size) break;
      this.boxed += this.box.size;
      const type = this.box.type;
      this.box = null;
      if (type === MDAT) out.push(this.takeChunk());
    }
    return out;
  }

  /** The stream ended: the boxes after the last mdat (if any) as a last piece; throws if the
   * stream stopped inside a box. */
  end(): Uint8Array<ArrayBuffer> | null {
    if (this.pending.length > this.boxed) {
      throw new Error(`segment ended inside a box (${this.pending.length - this.boxed} bytes after byte ${this.offset + this.boxed})`);
    }
    return this.boxed > 0 ? this.takeChunk() : null;
  }

  private takeChunk(): Uint8Array<ArrayBuffer> {
    const chunk = this.pending.take(this.boxed);
    this.offset += this.boxed;
    this.boxed = 0;
    return chunk;
  }
}

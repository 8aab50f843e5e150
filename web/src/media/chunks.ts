/**
 * CMAF chunks of a media segment as its bytes arrive: a chunk ends with each top-level `mdat`
 * (the boxes before a `moof` — styp, sidx, prft, emsg — travel with it), so each one can be
 * appended to MSE as soon as it is complete. The same rule as the server's
 * `pccstream.media.mp4.read_chunks`; both check shared/vectors/cmaf-chunks.json.
 */

/** Byte pieces waiting to be parsed: a box header is read across pieces, a chunk copied once. */
class Pieces {
  private pieces: Uint8Array[] = [];
  private head = 0; // bytes of pieces[0] already taken
  length = 0;

  push(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.pieces.push(bytes.slice()); // the stream reader may reuse its buffer
    this.length += bytes.length;
  }

  /** The byte at `offset` from the start (offset < length). */
  byteAt(offset: number): number {
    let at = offset + this.head;
    for (const piece of this.pieces) {
      if (at < piece.length) return piece[at] as number;
      at -= piece.length;
    }
    throw new RangeError(`byteAt(${offset}) of ${this.length} bytes`);
  }

  /** Big-endian unsigned integer of `bytes` bytes at `offset` (as a double: exact below 2^53). */
  uint(offset: number, bytes: number): number {
    let value = 0;
    for (let i = 0; i < bytes; i++) value = value * 256 + this.byteAt(offset + i);
    return value;
  }

  take(n: number): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const piece = this.pieces[0] as Uint8Array;
      const count = Math.min(n - filled, piece.length - this.head);
      out.set(piece.subarray(this.head, this.head + count), filled);
      filled += count;
      this.head += count;
      if (this.head === piece.length) {
        this.pieces.shift();
        this.head = 0;
      }
    }
    this.length -= n;
    return out;
  }
}

const MDAT = 0x6d646174; // 'mdat'

export class CmafChunkParser {
  private readonly pending = new Pieces();
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

/** Byte pieces waiting to be parsed, in stream order: headers are read across pieces, and
 * taking n bytes copies them once. */
export class ByteQueue {
  private pieces: Uint8Array[] = [];
  private head = 0; // bytes of pieces[0] already taken
  length = 0;

  push(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.pieces.push(bytes.slice()); // the reader may reuse its buffer
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
    if (n > this.length) throw new RangeError(`take(${n}) of ${this.length} bytes`);
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

  /** The first n bytes without taking them (n small: headers). */
  peek(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    let head = this.head;
    for (const piece of this.pieces) {
      const count = Math.min(n - filled, piece.length - head);
      out.set(piece.subarray(head, head + count), filled);
      filled += count;
      head = 0;
      if (filled === n) break;
    }
    return out;
  }
}

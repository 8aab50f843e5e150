/** A bounded FIFO: keeps the last `capacity` items (telemetry is unbounded over long sessions). */
export class RingBuffer<T> {
  private readonly items: (T | undefined)[];
  private start = 0;
  private count = 0;
  /** Items pushed out because the buffer was full. */
  dropped = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError('capacity must be a positive integer');
    this.items = new Array<T | undefined>(capacity);
  }

  push(item: T): void {
    if (this.count < this.capacity) {
      this.items[(this.start + this.count) % this.capacity] = item;
      this.count += 1;
    } else {
      this.items[this.start] = item;
      this.start = (this.start + 1) % this.capacity;
      this.dropped += 1;
    }
  }

  get length(): number {
    return this.count;
  }

  /** Oldest first. */
  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.items[(this.start + i) % this.capacity] as T);
    return out;
  }
}

import { bufferAhead, evictionRange, toRanges, type Range } from './ranges';

/** Played media kept behind the playhead; older media is removed before appends. */
export const KEEP_BEHIND_S = 10;
/** On QuotaExceededError: keep only this much behind, and retry. */
const QUOTA_KEEP_BEHIND_S = 1;
const QUOTA_RETRY_MS = 250;
const QUOTA_GIVE_UP_MS = 60_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function isQuotaError(error: unknown): boolean {
  return error instanceof Error && error.name === 'QuotaExceededError';
}

/** What MediaBuffer uses of a SourceBuffer (a fake in tests). */
export interface SourceBufferLike {
  readonly buffered: TimeRanges;
  appendBuffer(data: Uint8Array<ArrayBuffer>): void;
  remove(start: number, end: number): void;
  changeType(type: string): void;
  addEventListener(type: 'updateend' | 'error', listener: () => void): void;
  removeEventListener(type: 'updateend' | 'error', listener: () => void): void;
}

export interface MediaSourceLike {
  readonly readyState: ReadyState;
  endOfStream(): void;
}

/** What MediaBuffer uses of the video element. */
export interface VideoLike {
  readonly currentTime: number;
  readonly error: MediaError | null;
}

export interface MediaBufferOptions {
  isTypeSupported?: (mime: string) => boolean;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * One MSE SourceBuffer with a serial operation queue: every append/remove waits for the
 * previous one's `updateend`. Media behind the playhead is evicted so memory stays bounded.
 */
export class MediaBuffer {
  /** SourceBuffer operations (append/remove), one at a time. */
  private queue: Promise<void> = Promise.resolve();
  /** Whole appends (type switch, eviction, retries) and endOfStream, one at a time. */
  private ops: Promise<void> = Promise.resolve();
  private mime: string;
  /** Bytes appended so far (for the panel). */
  appendedBytes = 0;
  evictions = 0;

  private readonly isTypeSupported: (mime: string) => boolean;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly video: VideoLike,
    readonly mediaSource: MediaSourceLike,
    private readonly sourceBuffer: SourceBufferLike,
    mime: string,
    options: MediaBufferOptions = {},
  ) {
    this.mime = mime;
    this.isTypeSupported = options.isTypeSupported ?? ((type) => MediaSource.isTypeSupported(type));
    this.now = options.now ?? (() => performance.now());
    this.sleep = options.sleep ?? sleep;
  }

  /** Attach a new MediaSource to `video`; resolves once it is open (no type needed yet, so
   * this runs while the manifest is still on its way). */
  static async attach(video: HTMLVideoElement): Promise<MediaSource> {
    if (typeof MediaSource === 'undefined') throw new Error('this browser has no Media Source Extensions');
    const mediaSource = new MediaSource();
    const opened = new Promise<void>((resolve) => mediaSource.addEventListener('sourceopen', () => resolve(), { once: true }));
    video.src = URL.createObjectURL(mediaSource);
    await opened;
    URL.revokeObjectURL(video.src);
    return mediaSource;
  }

  /** Add one SourceBuffer of type `mime` to an open MediaSource (`attach`, or a new one). */
  static async open(video: HTMLVideoElement, mime: string, attached?: MediaSource): Promise<MediaBuffer> {
    if (typeof MediaSource === 'undefined') throw new Error('this browser has no Media Source Extensions');
    if (!MediaSource.isTypeSupported(mime)) throw new Error(`MSE does not support ${mime}`);
    const mediaSource = attached ?? (await MediaBuffer.attach(video));
    const sourceBuffer = mediaSource.addSourceBuffer(mime);
    sourceBuffer.mode = 'segments';
    return new MediaBuffer(video, mediaSource, sourceBuffer, mime);
  }

  ranges(): Range[] {
    try {
      return toRanges(this.sourceBuffer.buffered);
    } catch {
      return []; // the SourceBuffer was removed (MediaSource closed)
    }
  }

  bufferAhead(): number {
    return bufferAhead(this.ranges(), this.video.currentTime);
  }

  /** Run `start` (which begins an async SourceBuffer update) after the queued operations. */
  private enqueue(start: () => void): Promise<void> {
    const run = async (): Promise<void> => {
      await new Promise<void>((resolve, reject) => {
        const sb = this.sourceBuffer;
        const done = (): void => {
          sb.removeEventListener('updateend', done);
          sb.removeEventListener('error', failed);
          resolve();
        };
        const failed = (): void => {
          sb.removeEventListener('updateend', done);
          sb.removeEventListener('error', failed);
          const mediaError = this.video.error;
          reject(new Error(`SourceBuffer error${mediaError ? `: ${mediaError.message || `media error ${mediaError.code}`}` : ''}`));
        };
        sb.addEventListener('updateend', done);
        sb.addEventListener('error', failed);
        try {
          start();
        } catch (error) {
          sb.removeEventListener('updateend', done);
          sb.removeEventListener('error', failed);
          reject(error);
        }
      });
    };
    const result = this.queue.then(run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  remove(range: Range): Promise<void> {
    return this.enqueue(() => this.sourceBuffer.remove(range.start, range.end));
  }

  /** Remove media more than `keepBehindS` behind the playhead (if worth it). */
  async evict(keepBehindS = KEEP_BEHIND_S): Promise<boolean> {
    const range = evictionRange(this.ranges(), this.video.currentTime, keepBehindS, keepBehindS === KEEP_BEHIND_S ? 1 : 0.1);
    if (range === null) return false;
    await this.remove(range);
    this.evictions += 1;
    return true;
  }

  /**
   * Append an init or media segment. `mime` switches the SourceBuffer's type first when it
   * differs (a rendition with another codec string). Evicts played media first; on
   * QuotaExceededError evicts down to 1 s behind the playhead and retries, waiting for
   * playback to free room, for up to a minute.
   */
  append(data: Uint8Array<ArrayBuffer>, mime?: string): Promise<void> {
    return this.serial(() => this.appendNow(data, mime));
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const result = this.ops.then(fn);
    this.ops = result.catch(() => undefined);
    return result;
  }

  private async appendNow(data: Uint8Array<ArrayBuffer>, mime?: string): Promise<void> {
    if (mime !== undefined && mime !== this.mime) {
      if (!this.isTypeSupported(mime)) throw new Error(`MSE does not support ${mime}`);
      await this.queue;
      this.sourceBuffer.changeType(mime);
      this.mime = mime;
    }
    await this.evict();
    const began = this.now();
    for (;;) {
      try {
        await this.enqueue(() => this.sourceBuffer.appendBuffer(data));
        this.appendedBytes += data.byteLength;
        return;
      } catch (error) {
        if (!isQuotaError(error)) throw error;
        if (this.now() - began > QUOTA_GIVE_UP_MS) {
          throw new Error(`SourceBuffer full (QuotaExceededError) for ${QUOTA_GIVE_UP_MS / 1000} s`);
        }
        const evicted = await this.evict(QUOTA_KEEP_BEHIND_S);
        if (!evicted) await this.sleep(QUOTA_RETRY_MS);
      }
    }
  }

  endOfStream(): Promise<void> {
    return this.serial(async () => {
      await this.queue;
      if (this.mediaSource.readyState === 'open') this.mediaSource.endOfStream();
    });
  }
}

import { describe, expect, it } from 'vitest';
import { DEFAULT_BUFFER_S, type PlayerParams } from '../params';
import { Status, type KindName, type ResponseHeader } from '../protocol';
import { ServerError, type Response } from '../transport/response';
import vectors from '../../../shared/vectors/cmaf-chunks.json';
import { hexToBytes } from '../protocol';
import { Player, type BufferLike, type PlayerDeps } from './player';

const MIME = 'video/mp4; codecs="avc1.64001f"';

function manifest(segments = 6, renditions = [300_000, 750_000, 1_500_000, 3_000_000]): object {
  return {
    version: 1,
    duration_s: 2 * segments,
    segment_seconds: 2,
    renditions: renditions.map((bitrate, r) => ({
      id: `${bitrate / 1000}k`,
      bitrate_bps: bitrate,
      width: 640,
      height: 360,
      codec: 'avc1.64001f',
      mime: r === 2 ? 'video/mp4; codecs="avc1.640028"' : MIME,
      init: { file: `${r}/init.mp4`, bytes: 1 },
      segments: Array.from({ length: segments }, (_, i) => ({
        file: `${r}/${i}.m4s`,
        start_s: 2 * i,
        duration_s: 2,
        bytes: (bitrate * 2) / 8,
      })),
    })),
  };
}

/** A one-chunk media segment: an empty moof and an mdat of 2 + rendition bytes. */
function segmentBody(rendition: number): Uint8Array<ArrayBuffer> {
  const mdat = 10 + rendition;
  return new Uint8Array([0, 0, 0, 8, 0x6d, 0x6f, 0x6f, 0x66, 0, 0, 0, mdat, 0x6d, 0x64, 0x61, 0x74, ...new Array<number>(mdat - 8).fill(7)]);
}

function header(kind: KindName, rendition: number, segment: number, status = 0, bodyLength = 0): ResponseHeader {
  const name = (Object.keys(Status) as (keyof typeof Status)[]).find((k) => Status[k] === status) ?? 'OK';
  return { status: name, statusCode: status, kind: 0, rendition, segment, bodyLength, serverTimeUs: 0 };
}

/** A session, a buffer and a clock: playback advances while the player sleeps. */
function harness(opts: { manifest?: object; throughputKbps?: number; failSegment?: number } = {}) {
  const requests: string[] = [];
  const appends: string[] = [];
  const video = { currentTime: 0 };
  let appendedEnd = 0;
  const buffer: BufferLike = {
    append: async (data, mime) => {
      appends.push(data.length === 1 ? `init${mime ? ` ${mime}` : ''}` : `media ${data.length}`);
      if (data.length > 1) appendedEnd += 2;
    },
    ranges: () => (appendedEnd > 0 ? [{ start: 0, end: appendedEnd }] : []),
    bufferAhead: () => Math.max(0, appendedEnd - video.currentTime),
    endOfStream: async () => {
      appends.push('eos');
    },
  };
  const deps: PlayerDeps = {
    openBuffer: async (mime) => {
      appends.push(`open ${mime}`);
      return buffer;
    },
    isTypeSupported: (mime) => mime === MIME || mime.includes('640028'),
    sleep: async (ms) => {
      video.currentTime = Math.min(appendedEnd, video.currentTime + ms / 1000);
    },
  };
  const session = {
    request: async (kind: KindName, rendition = 0, segment = 0, onBody?: (piece: Uint8Array) => void): Promise<Response> => {
      requests.push(kind === 'MANIFEST' ? kind : `${kind} ${rendition}/${segment}`);
      if (kind === 'SEGMENT' && segment === opts.failSegment) {
        throw new ServerError(header(kind, rendition, segment, Status.UNKNOWN_SEGMENT), `no segment ${segment}`);
      }
      const body =
        kind === 'MANIFEST'
          ? new TextEncoder().encode(JSON.stringify(opts.manifest ?? manifest()))
          : kind === 'INIT'
            ? new Uint8Array(1)
            : segmentBody(rendition);
      const kbps = opts.throughputKbps ?? 5000;
      const streamed = kind === 'SEGMENT' && onBody !== undefined;
      if (streamed) onBody(body);
      return {
        header: header(kind, rendition, segment, 0, body.length),
        body: streamed ? new Uint8Array(0) : body,
        timing: { startMs: 0, ttfbMs: 5, downloadMs: 100, transferMs: 95, bytes: body.length, throughputKbps: kbps },
      };
    },
  };
  return { requests, appends, video, deps, session };
}

function params(over: Partial<PlayerParams> = {}): PlayerParams {
  return { server: null, certHash: null, mode: 'abr', bitrateKbps: null, bufferS: DEFAULT_BUFFER_S, autoplay: true, prefetch: false, startRendition: 'abr', forwarded: [], ...over };
}

const hooks = { status: () => undefined, firstMedia: () => undefined };

describe('Player', () => {
  it('mode=fixed: manifest, one init, every segment in order, then endOfStream', async () => {
    const h = harness();
    const player = new Player(h.session, h.video, params({ mode: 'fixed', bitrateKbps: 800 }), hooks, h.deps);
    await player.run();
    expect(h.requests).toEqual(['MANIFEST', 'INIT 1/0', ...[0, 1, 2, 3, 4, 5].map((i) => `SEGMENT 1/${i}`)]);
    expect(h.appends[0]).toBe(`open ${MIME}`);
    expect(h.appends[1]).toBe(`init ${MIME}`);
    expect(h.appends.at(-1)).toBe('eos');
    expect(player.eos).toBe(true);
    expect(player.segments.map((s) => [s.index, s.rendition, s.renditionId, s.bitrateKbps])).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => [i, 1, '750k', 750]),
    );
    expect(player.renditionAt(3)).toEqual({ rendition: 1, bitrateBps: 750_000 });
  });

  it('keeps the buffer within the target: never requests with a full buffer', async () => {
    const h = harness({ manifest: manifest(20) });
    const player = new Player(h.session, h.video, params({ mode: 'fixed', bitrateKbps: 300, bufferS: 5 }), hooks, h.deps);
    await player.run();
    for (const s of player.segments) expect(s.bufferAtRequestS).toBeLessThan(5);
    expect(Math.max(...player.segments.map((s) => s.bufferAtRequestS))).toBeGreaterThan(3);
    expect(player.segments.length).toBe(20);
  });

  it('prefetch: requests the next segment while the current one downloads, each once, in order', async () => {
    const h = harness();
    let inFlight = 0;
    let maxInFlight = 0;
    const request = h.session.request;
    h.session.request = async (kind, rendition, segment, onBody) => {
      const counted = kind === 'SEGMENT'; // the init segment goes out alongside (pipelined)
      if (counted) inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await Promise.resolve();
        return await request(kind, rendition, segment, onBody);
      } finally {
        if (counted) inFlight--;
      }
    };
    const player = new Player(h.session, h.video, params({ mode: 'fixed', bitrateKbps: 800, prefetch: true }), hooks, h.deps);
    await player.run();
    expect(h.requests).toEqual(['MANIFEST', 'INIT 1/0', ...[0, 1, 2, 3, 4, 5].map((i) => `SEGMENT 1/${i}`)]);
    expect(maxInFlight).toBe(2);
    expect(player.segments.map((s) => s.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(h.appends.filter((a) => a.startsWith('media')).length).toBe(6);
  });

  it('startRendition=lowest: the first segment and its init go out with the manifest, then the fixed rendition', async () => {
    const h = harness();
    const started: string[] = [];
    const player = new Player(h.session, h.video, params({ mode: 'fixed', bitrateKbps: 800, startRendition: 'lowest' }), { ...hooks, firstMedia: () => started.push(h.appends.join(',')) }, h.deps);
    await player.run();
    expect(h.requests.slice(0, 4)).toEqual(['INIT 0/0', 'SEGMENT 0/0', 'MANIFEST', 'INIT 1/0']);
    expect(h.requests.slice(4)).toEqual([1, 2, 3, 4, 5].map((i) => `SEGMENT 1/${i}`));
    expect(player.segments.map((s) => s.rendition)).toEqual([0, 1, 1, 1, 1, 1]);
    expect(h.appends.slice(0, 4)).toEqual([`open ${MIME}`, `init ${MIME}`, 'media 18', `init ${MIME}`]);
    // Playback may start once the first chunk is appended, before the segment is complete.
    expect(started).toEqual([`open ${MIME},init ${MIME},media 18`]);
  });

  it('appends each chunk as it arrives and starts on the first', async () => {
    const h = harness({ manifest: manifest(2) });
    const two = new Uint8Array([...segmentBody(0), ...segmentBody(1)]);
    let release: () => void = () => undefined;
    const request = h.session.request;
    h.session.request = async (kind, rendition, segment, onBody) => {
      if (kind !== 'SEGMENT' || segment !== 0 || !onBody) return request(kind, rendition, segment, onBody);
      onBody(two.subarray(0, 20)); // the first chunk (18 bytes) and 2 bytes of the next
      await new Promise<void>((resolve) => (release = resolve));
      onBody(two.subarray(20));
      const r = await request(kind, rendition, segment);
      return { ...r, body: new Uint8Array(0) };
    };
    let firstAt: string[] = [];
    const player = new Player(h.session, h.video, params({ mode: 'fixed', bitrateKbps: 300 }), { ...hooks, firstMedia: () => (firstAt = [...h.appends]) }, h.deps);
    const running = player.run();
    for (let i = 0; i < 20 && firstAt.length === 0; i++) await Promise.resolve();
    expect(firstAt.at(-1)).toBe('media 18'); // started before the rest of the segment came
    release();
    await running;
    expect(h.appends.filter((a) => a.startsWith('media'))).toEqual(['media 18', 'media 19', 'media 18']);
  });

  it('reports the startup steps: init appended, first chunk appended, then firstMedia', async () => {
    for (const startRendition of ['lowest', 'abr'] as const) {
      const h = harness({ manifest: manifest(2) });
      const steps: string[] = [];
      const stepHooks = {
        ...hooks,
        step: (phase: string) => steps.push(`${phase} after ${h.appends.at(-1) ?? ''}`),
        firstMedia: () => steps.push('firstMedia'),
      };
      const player = new Player(h.session, h.video, params({ mode: 'fixed', bitrateKbps: 300, startRendition }), stepHooks, h.deps);
      await player.run();
      expect(steps).toEqual([`initAppendedMs after init ${MIME}`, 'firstChunkAppendedMs after media 18', 'firstMedia']);
    }
  });

  it('startRendition=lowest plays from the init segment\'s codec before the manifest is in', async () => {
    const realInit = vectors.init_codecs[0];
    if (!realInit) throw new Error('no init vector');
    const mime = `video/mp4; codecs="${realInit.codec}"`;
    const h = harness({ manifest: manifest(3) });
    h.deps.isTypeSupported = (type) => type === MIME || type === mime;
    let releaseManifest: () => void = () => undefined;
    const manifestGate = new Promise<void>((resolve) => (releaseManifest = resolve));
    const request = h.session.request;
    let secondChunk: () => void = () => undefined;
    h.session.request = async (kind, rendition, segment, onBody) => {
      if (kind === 'MANIFEST') await manifestGate;
      if (kind === 'SEGMENT' && segment === 0 && onBody) {
        // Two chunks, the second a little later: both appended while the manifest is away.
        onBody(segmentBody(0));
        await new Promise<void>((resolve) => (secondChunk = resolve));
        onBody(segmentBody(1));
        const r = await request(kind, rendition, segment);
        return { ...r, body: new Uint8Array(0) };
      }
      const r = await request(kind, rendition, segment, onBody);
      return kind === 'INIT' && rendition === 0 ? { ...r, body: hexToBytes(realInit.init) as Uint8Array<ArrayBuffer> } : r;
    };
    let startedAt: string[] | null = null;
    const player = new Player(h.session, h.video, params({ mode: 'fixed', bitrateKbps: 800, startRendition: 'lowest' }), { ...hooks, firstMedia: () => (startedAt = [...h.appends]) }, h.deps);
    const running = player.run();
    for (let i = 0; i < 50 && startedAt === null; i++) await new Promise((resolve) => setTimeout(resolve, 0));
    // Playing, with the manifest still withheld: the buffer was opened with the init's codec.
    expect(startedAt).toEqual([`open ${mime}`, `media ${hexToBytes(realInit.init).length}`, 'media 18']);
    secondChunk();
    for (let i = 0; i < 50 && !h.appends.includes('media 19'); i++) await new Promise((resolve) => setTimeout(resolve, 0));
    expect(h.appends.at(-1)).toBe('media 19'); // the second chunk, with the manifest still away
    releaseManifest();
    await running;
    expect(player.segments.map((s) => s.rendition)).toEqual([0, 1, 1]);
    expect(player.renditionAt(1)).toEqual({ rendition: 0, bitrateBps: 300_000 });
  });

  it('mode=fixed with a bitrate below the ladder is an error naming the ladder', async () => {
    const h = harness();
    const player = new Player(h.session, h.video, params({ mode: 'fixed', bitrateKbps: 100 }), hooks, h.deps);
    await expect(player.run()).rejects.toThrow(/no rendition at or below 100 kbit\/s; the ladder is 300k/);
  });

  it('mode=abr starts low, climbs with throughput, and re-sends init (with its type) on a switch', async () => {
    const h = harness({ throughputKbps: 2000 });
    const player = new Player(h.session, h.video, params(), hooks, h.deps);
    await player.run();
    const renditions = player.segments.map((s) => s.rendition);
    expect(renditions[0]).toBe(0);
    expect(renditions.slice(1).every((r) => r === 2)).toBe(true); // 1500k ≤ 0.9 × 2000
    expect(h.requests.filter((r) => r.startsWith('INIT'))).toEqual(['INIT 0/0', 'INIT 2/0']);
    expect(h.appends).toContain('init video/mp4; codecs="avc1.640028"');
    expect(player.renditionAt(1)).toEqual({ rendition: 0, bitrateBps: 300_000 });
    expect(player.renditionAt(5)).toEqual({ rendition: 2, bitrateBps: 1_500_000 });
  });

  it('mode=abr skips renditions MSE cannot play', async () => {
    const m = manifest(4) as { renditions: { mime: string }[] };
    const top = m.renditions[3];
    if (top) top.mime = 'video/mp4; codecs="hev1.1.6.L93.B0"';
    const h = harness({ manifest: m, throughputKbps: 100_000 });
    const player = new Player(h.session, h.video, params(), hooks, h.deps);
    await player.run();
    expect(Math.max(...player.segments.map((s) => s.rendition))).toBe(2);
  });

  it('surfaces a server error status with its message', async () => {
    const h = harness({ failSegment: 2 });
    const player = new Player(h.session, h.video, params({ mode: 'fixed', bitrateKbps: 300 }), hooks, h.deps);
    await expect(player.run()).rejects.toThrow('server answered UNKNOWN_SEGMENT: no segment 2');
    expect(player.eos).toBe(false);
  });

  it('rejects a manifest that is not JSON or not valid', async () => {
    const bad = harness({ manifest: { version: 9 } });
    await expect(new Player(bad.session, bad.video, params(), hooks, bad.deps).run()).rejects.toThrow(/bad manifest/);
  });
});

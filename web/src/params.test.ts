import { describe, expect, it } from 'vitest';
import { DEFAULT_BUFFER_S, DEFAULT_LIVE_FEC, MAX_LIVE_FEC, liveGiveUpMs, parseParams, parseSha256Hex, sessionLiveFec, sessionUrl, type LiveParams } from './params';

const HASH = 'ab'.repeat(32);

describe('parseParams', () => {
  it('has defaults', () => {
    const { params, errors, warnings } = parseParams('');
    expect(errors).toEqual([]);
    expect(warnings).toEqual([]);
    expect(params).toEqual({
      server: null,
      certHash: null,
      mode: 'abr',
      bitrateKbps: null,
      bufferS: DEFAULT_BUFFER_S,
      autoplay: true,
      prefetch: false,
      startRendition: 'lowest',
      forwarded: [],
    });
  });

  it('reads startRendition for VOD only', () => {
    expect(parseParams('?mode=fixed&bitrate=3000&startRendition=abr').params.startRendition).toBe('abr');
    expect(parseParams('?startRendition=lowest').params.startRendition).toBe('lowest');
    expect(parseParams('?mode=abr').params.startRendition).toBe('lowest');
    expect(parseParams('?mode=fixed&bitrate=3000').params.startRendition).toBe('lowest');
    expect(parseParams('?mode=fixed&bitrate=3000&startRendition=lowest').params.startRendition).toBe('lowest');
    expect(parseParams('?startRendition=top').errors).toEqual(['startRendition: expected lowest or abr, got "top"']);
    expect(parseParams('?mode=live&startRendition=abr').errors).toEqual(['startRendition only applies to mode=fixed or mode=abr']);
  });

  it('prefetches in fixed mode unless told not to', () => {
    expect(parseParams('?mode=fixed&bitrate=3000').params.prefetch).toBe(true);
    expect(parseParams('?mode=fixed&bitrate=3000&prefetch=0').params.prefetch).toBe(false);
    expect(parseParams('?mode=abr').params.prefetch).toBe(false);
    expect(parseParams('?mode=abr&prefetch=1').errors).toEqual(['prefetch only applies to mode=fixed']);
    expect(parseParams('?mode=fixed&bitrate=3000&prefetch=2').errors).toEqual(['prefetch: expected 1 or 0, got "2"']);
  });

  it('reads every parameter', () => {
    const { params, errors } = parseParams(
      `?server=https://127.0.0.1:5555/stream&certHash=${HASH}&mode=fixed&bitrate=1500&buffer=4.5&autoplay=0`,
    );
    expect(errors).toEqual([]);
    expect(params.server).toBe('https://127.0.0.1:5555/stream');
    expect(params.certHash?.length).toBe(32);
    expect(params.certHash?.[0]).toBe(0xab);
    expect(params.mode).toBe('fixed');
    expect(params.bitrateKbps).toBe(1500);
    expect(params.bufferS).toBe(4.5);
    expect(params.autoplay).toBe(false);
  });

  it('forwards cc, cc.* and test.* in order', () => {
    const { params, errors } = parseParams('?cc=vivace&cc.t=0.9&buffer=5&test.withhold_at=3&cc.b=900&test.withhold_s=2');
    expect(errors).toEqual([]);
    expect(params.forwarded).toEqual([
      ['cc', 'vivace'],
      ['cc.t', '0.9'],
      ['test.withhold_at', '3'],
      ['cc.b', '900'],
      ['test.withhold_s', '2'],
    ]);
  });

  it('reads mode=live and its parameters; keep goes to the session as live.keep_ms', () => {
    let parsed = parseParams('?mode=live');
    expect(parsed.errors).toEqual([]);
    expect(parsed.params.mode).toBe('live');
    expect(parsed.params.live).toEqual({ targetLatencyMs: 1000, keepMs: null, rendition: null, abr: false });
    expect(parsed.params.forwarded).toEqual([['live.fec', 'auto']]);
    parsed = parseParams('?cc=bbr&mode=live&latency=2500&keep=750&rendition=1500k&buffer=3');
    expect(parsed.errors).toEqual([]);
    expect(parsed.params.live).toEqual({ targetLatencyMs: 2500, keepMs: 750, rendition: '1500k', abr: false });
    expect(parsed.params.forwarded).toEqual([['cc', 'bbr'], ['live.keep_ms', '750'], ['live.fec', 'auto']]);
    expect(parsed.warnings.join()).toMatch(/buffer does not apply to mode=live/);
    parsed = parseParams('?mode=live&bitrate=800');
    expect(parsed.errors).toEqual([]);
    expect(parsed.params.bitrateKbps).toBe(800);
    parsed = parseParams('?mode=live&abr=1&bitrate=2500');
    expect(parsed.errors).toEqual([]);
    expect(parsed.params.live?.abr).toBe(true);
    expect(parseParams('?mode=live&abr=1&rendition=0').errors.join()).toMatch(/with abr=1 give bitrate/);
    expect(parseParams('?mode=live&abr=yes').errors.join()).toMatch(/abr: expected 1 or 0/);
    expect(parseParams('?abr=1').errors.join()).toMatch(/abr only applies to mode=live/);
  });

  it('reads fec (mode=live) and forwards it as live.fec after live.keep_ms', () => {
    let parsed = parseParams('?mode=live&fec=4&keep=250');
    expect(parsed.errors).toEqual([]);
    expect(parsed.params.live).toEqual({ targetLatencyMs: 1000, keepMs: 250, rendition: null, abr: false, fec: 4 });
    expect(parsed.params.forwarded).toEqual([['live.keep_ms', '250'], ['live.fec', '4']]);
    parsed = parseParams("?mode=live&fec=0");
    expect(parsed.errors).toEqual([]);
    expect(parsed.params.live?.fec).toBe(0);
    expect(parsed.params.forwarded).toEqual([['live.fec', '0']]);
    expect(parseParams(`?mode=live&fec=${MAX_LIVE_FEC}`).params.live?.fec).toBe(64);
    parsed = parseParams('?mode=live&fec=auto');
    expect(parsed.errors).toEqual([]);
    expect(parsed.params.live?.fec).toBe('auto');
    expect(parsed.params.forwarded).toEqual([['live.fec', 'auto']]);
    // fec=streams: groups on streams, nothing forwarded.
    parsed = parseParams('?mode=live&fec=streams');
    expect(parsed.errors).toEqual([]);
    expect(parsed.params.live?.fec).toBe('streams');
    expect(parsed.params.forwarded).toEqual([]);
    // Without fec the field is absent and the session gets the default, fec=auto.
    parsed = parseParams('?mode=live');
    expect(parsed.params.live).not.toHaveProperty('fec');
    expect(DEFAULT_LIVE_FEC).toBe('auto');
    expect(parsed.params.forwarded).toEqual([['live.fec', 'auto']]);
    expect(sessionLiveFec(parsed.params.live as LiveParams)).toBe('auto');
    expect(sessionLiveFec(parseParams('?mode=live&fec=streams').params.live as LiveParams)).toBeNull();
  });

  it('parses jitter (the playout delay\'s σ: sd or diff), player-side only', () => {
    const parsed = parseParams('?mode=live&jitter=diff');
    expect(parsed.errors).toEqual([]);
    expect(parsed.params.live?.jitter).toBe('diff');
    expect(parsed.params.forwarded).toEqual([['live.fec', 'auto']]);
    expect(parseParams('?mode=live&jitter=sd').params.live?.jitter).toBe('sd');
    expect(parseParams('?mode=live').params.live).not.toHaveProperty('jitter');
    expect(parseParams('?mode=live&jitter=mad').errors).toEqual(['jitter: expected sd or diff, got "mad"']);
    expect(parseParams('?mode=fixed&bitrate=750&jitter=diff').errors).toEqual(['jitter only applies to mode=live']);
  });

  it('parses transient (how the first groups after a join or switch up count: hold or drop), player-side only', () => {
    const parsed = parseParams('?mode=live&transient=drop');
    expect(parsed.errors).toEqual([]);
    expect(parsed.params.live?.transient).toBe('drop');
    expect(parsed.params.forwarded).toEqual([['live.fec', 'auto']]);
    expect(parseParams('?mode=live').params.live).not.toHaveProperty('transient');
    expect(parseParams('?mode=live&transient=1').errors).toEqual(['transient: expected hold or drop, got "1"']);
  });

  it('gives a group up after keep when given, else after the target latency (fec)', () => {
    expect(liveGiveUpMs(parseParams('?mode=live&fec=2&keep=250&latency=800').params.live as LiveParams)).toBe(250);
    expect(liveGiveUpMs(parseParams('?mode=live&fec=2&latency=800').params.live as LiveParams)).toBe(800);
  });

  it('means mode=fixed when only bitrate is given', () => {
    expect(parseParams('?bitrate=800').params.mode).toBe('fixed');
  });

  it.each([
    ['?mode=live&latency=0', /latency: expected the target latency in ms/],
    ['?mode=live&latency=abc', /latency/],
    ['?mode=live&latency=70000', /latency/],
    ['?mode=live&keep=-1', /keep: expected whole milliseconds/],
    ['?mode=live&keep=1.5', /keep/],
    ['?mode=live&keep=60001', /keep/],
    ['?mode=live&fec=-1', /fec: expected data fragments per parity fragment, a whole number in \[0, 64\]/],
    ['?mode=live&fec=65', /fec: expected/],
    ['?mode=live&fec=1.5', /fec: expected/],
    ['?mode=live&fec=', /fec: expected/],
    ['?mode=live&fec=AUTO', /fec: expected .*, auto or streams/],
    ['?mode=abr&fec=4', /fec only applies to mode=live/],
    ['?mode=live&rendition=', /rendition: empty/],
    ['?mode=live&rendition=1&bitrate=800', /rendition or bitrate, not both/],
    ['?latency=500', /latency only applies to mode=live/],
    ['?mode=fixed&bitrate=800&keep=100', /keep only applies to mode=live/],
    ['?mode=abr&rendition=0', /rendition only applies to mode=live/],
    ['?mode=bogus', /unknown mode/],
    ['?mode=fixed', /needs bitrate/],
    ['?mode=abr&bitrate=100', /only applies to mode=fixed/],
    ['?bitrate=-5', /bitrate/],
    ['?bitrate=abc', /bitrate/],
    ['?buffer=0', /buffer/],
    ['?buffer=1e9', /buffer/],
    ['?autoplay=maybe', /autoplay/],
    ['?certHash=abcd', /certHash/],
    ['?server=http://127.0.0.1:4433/stream', /https/],
    ['?server=not a url', /https/],
    ['?cc=', /empty controller/],
    ['?cc.=1', /empty parameter/],
  ])('reports %s', (query, message) => {
    const { errors } = parseParams(query);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join('\n')).toMatch(message);
  });

  it('warns about unknown parameters without failing', () => {
    const { errors, warnings } = parseParams('?bitrte=100');
    expect(errors).toEqual([]);
    expect(warnings).toEqual(['unknown URL parameter "bitrte" ignored']);
  });
});

describe('parseSha256Hex', () => {
  it('accepts colons and upper case', () => {
    const colon = HASH.toUpperCase().match(/../g)?.join(':') ?? '';
    expect(parseSha256Hex(colon)).toEqual(parseSha256Hex(HASH));
  });
  it('rejects wrong lengths', () => {
    expect(parseSha256Hex(HASH + '00')).toBeNull();
    expect(parseSha256Hex('zz'.repeat(32))).toBeNull();
  });
});

describe('sessionUrl', () => {
  it('appends forwarded parameters', () => {
    expect(sessionUrl('https://127.0.0.1:4433/stream', [['cc', 'vivace'], ['cc.t', '0.9']])).toBe(
      'https://127.0.0.1:4433/stream?cc=vivace&cc.t=0.9',
    );
  });
  it('keeps an existing query', () => {
    expect(sessionUrl('https://h:1/stream?a=1', [['test.withhold_at', '2']])).toBe(
      'https://h:1/stream?a=1&test.withhold_at=2',
    );
  });
});

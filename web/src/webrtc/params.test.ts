import { describe, expect, it } from 'vitest';
import { chooseRendition, DEFAULT_BITRATE_BPS, parseReceiverParams, parseSenderParams } from './params';
import { relayCandidates } from './signalling';

const turn = 'turn=' + encodeURIComponent('turn:127.0.0.1:5000?transport=udp');

describe('parseSenderParams', () => {
  it('has defaults and the static TURN credentials', () => {
    const { params, errors, warnings } = parseSenderParams(`?${turn}`);
    expect(errors).toEqual([]);
    expect(warnings).toEqual([]);
    expect(params).toMatchObject({ room: 'default', maxBitrateBps: DEFAULT_BITRATE_BPS, fps: 30, degradation: 'maintain-framerate', codec: null, rendition: null });
    expect(params.iceServer).toEqual({ urls: 'turn:127.0.0.1:5000?transport=udp', username: 'pccstream', credential: 'pccstream' });
  });
  it('reports every bad value and unknown parameter', () => {
    const { errors, warnings } = parseSenderParams('?room=a/b&bitrate=2.5M&fps=0&degradation=fast&codec=hevc&nosuch=1');
    expect(errors).toHaveLength(6); // room, turn missing, bitrate, fps, degradation, codec
    expect(errors.join(' ')).toMatch(/turn is missing/);
    expect(warnings).toEqual(['unknown parameter nosuch (ignored)']);
  });
  it('takes overrides', () => {
    const { params, errors } = parseSenderParams(`?${turn}&room=call-1&bitrate=800000&fps=25&degradation=balanced&codec=VP9&rendition=750k&turnUser=u&turnPass=p`);
    expect(errors).toEqual([]);
    expect(params).toMatchObject({ room: 'call-1', maxBitrateBps: 800000, fps: 25, degradation: 'balanced', codec: 'vp9', rendition: '750k' });
    expect(params.iceServer).toMatchObject({ username: 'u', credential: 'p' });
  });
});

describe('parseReceiverParams', () => {
  it('refuses a non-TURN URL and warns about sender-only parameters', () => {
    const { errors, warnings } = parseReceiverParams('?turn=stun:127.0.0.1:1&bitrate=5');
    expect(errors[0]).toMatch(/not a turn: URL/);
    expect(warnings).toEqual(['unknown parameter bitrate (ignored)']);
  });
  it('takes the demo\'s embedded sender and the dashboard parameters (pccstream demo --cc webrtc)', () => {
    const sender = encodeURIComponent(`turn=${encodeURIComponent('turn:127.0.0.1:3478?transport=udp')}&bitrate=1200000`);
    const { params, errors, warnings } = parseReceiverParams(`?mode=webrtc&room=demo-b&${turn}&sender=${sender}&origin=1700000000000&compact=1&window=30&dashboard=1`);
    expect(errors).toEqual([]);
    expect(warnings).toEqual([]);
    expect(params.sender).toBe('turn=turn%3A127.0.0.1%3A3478%3Ftransport%3Dudp&bitrate=1200000');
    expect(parseReceiverParams(`?${turn}`).params.sender).toBeNull();
  });
  it('refuses another mode and a sender without its TURN URL', () => {
    const { errors } = parseReceiverParams(`?${turn}&mode=live&sender=bitrate%3D5`);
    expect(errors).toHaveLength(2);
    expect(errors.join(' ')).toMatch(/mode=live: this is the WebRTC receiver.*sender: .*turn=/);
  });
});

describe('chooseRendition', () => {
  const ladder = [
    { id: '300k', width: 426, height: 240, bitrate_bps: 300_000 },
    { id: '3000k', width: 1280, height: 720, bitrate_bps: 3_000_000 },
    { id: '1500k', width: 854, height: 480, bitrate_bps: 1_500_000 },
  ];
  it('picks the highest at or below the cap, else the lowest, or the one asked for', () => {
    expect(chooseRendition(ladder, null, 2_500_000)?.id).toBe('1500k');
    expect(chooseRendition(ladder, null, 100_000)?.id).toBe('300k');
    expect(chooseRendition(ladder, '3000k', 100_000)?.id).toBe('3000k');
    expect(chooseRendition(ladder, 'nosuch', 100_000)).toBeNull();
    expect(chooseRendition([], null, 1)).toBeNull();
  });
});

describe('relayCandidates', () => {
  it('counts relay candidates only', () => {
    const sdp = 'v=0\r\na=candidate:1 1 udp 50339839 127.0.0.1 40211 typ relay raddr 0.0.0.0 rport 0\r\na=candidate:2 1 udp 2122260223 10.0.0.2 5000 typ host\r\n';
    expect(relayCandidates(sdp)).toBe(1);
  });
});

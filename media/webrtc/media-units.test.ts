import { describe, expect, it } from 'vitest';
import { JitterBuffer } from './jitter-buffer.ts';
import { answerAsDtlsServer, unifyBundleCredentials } from './offer-sdp.ts';
import { BackgroundBed, BED_LEVEL_DBFS } from './background-bed.ts';
import { DEFAULT_DECODER_ENGINE, MEDIA_RATE, OpusFrameDecoder, type OpusDecoderEngine } from './opus.ts';
import { OpusFrameEncoder } from './opus-encoder.ts';
import { rmsDbfs } from '../pcm.ts';

const p = (n: number) => new Uint8Array([n]);
const kinds = (out: ReturnType<JitterBuffer['push']>) => out.map((r) => (r.kind === 'packet' ? r.payload[0] : 'lost'));

describe('jitter buffer', () => {
  it('releases in order, reorders late packets, fills a lost one with silence and drops stale ones', () => {
    const jb = new JitterBuffer(3);
    expect(kinds(jb.push(10, p(10)))).toEqual([10]);
    expect(kinds(jb.push(12, p(12)))).toEqual([]);
    expect(kinds(jb.push(11, p(11)))).toEqual([11, 12]);
    // 13 never arrives: after three newer packets it is given up as lost.
    expect(kinds(jb.push(14, p(14)))).toEqual([]);
    expect(kinds(jb.push(15, p(15)))).toEqual([]);
    expect(kinds(jb.push(16, p(16)))).toEqual(['lost', 14, 15, 16]);
    expect(kinds(jb.push(13, p(13)))).toEqual([]);
  });

  it('wraps around the 16-bit sequence space', () => {
    const jb = new JitterBuffer(3);
    expect(kinds(jb.push(65534, p(1)))).toEqual([1]);
    expect(kinds(jb.push(65535, p(2)))).toEqual([2]);
    expect(kinds(jb.push(0, p(3)))).toEqual([3]);
  });
});

describe('offer fix-ups', () => {
  it('gives every bundled m-line the first one\'s ICE credentials', () => {
    const offer = ['v=0', 'a=group:BUNDLE 0 1', 'm=audio 9 UDP 111', 'a=mid:0', 'a=ice-ufrag:AAAA', 'a=ice-pwd:aaaa', 'm=application 9 DTLS/SCTP 5000', 'a=mid:1', 'a=ice-ufrag:BBBB', 'a=ice-pwd:bbbb', ''].join('\r\n');
    const fixed = unifyBundleCredentials(offer);
    expect(fixed.match(/a=ice-ufrag:AAAA/g)).toHaveLength(2);
    expect(fixed).not.toContain('BBBB');
    expect(fixed.split('\r\n')).toHaveLength(offer.split('\r\n').length);
  });

  it('leaves an offer without BUNDLE untouched', () => {
    const offer = 'v=0\r\nm=audio 9 UDP 111\r\na=ice-ufrag:X\r\n';
    expect(unifyBundleCredentials(offer)).toBe(offer);
  });

  it('answers as the DTLS server whenever the offer lets it choose, and only then', () => {
    const answer = (setup: string) => ['v=0', 'm=audio 9 UDP 111', `a=setup:${setup}`, 'm=application 9 DTLS/SCTP 5000', `a=setup:${setup}`, ''].join('\r\n');
    const offer = (setup: string) => `v=0\r\nm=audio 9 UDP 111\r\na=setup:${setup}\r\n`;
    expect(answerAsDtlsServer(offer('actpass'), answer('active'))).toBe(answer('passive'));
    // The offerer chose: an `active` offer already gets a passive answer, a `passive` one must get active.
    expect(answerAsDtlsServer(offer('passive'), answer('active'))).toBe(answer('active'));
    expect(answerAsDtlsServer(offer('active'), answer('passive'))).toBe(answer('passive'));
  });
});

describe('background bed and Opus', () => {
  it('the bed sits at its documented level', () => {
    const samples = new Int16Array(48000 * 5);
    new BackgroundBed().mixInto(samples);
    expect(Math.abs(rmsDbfs(samples) - BED_LEVEL_DBFS)).toBeLessThan(3);
  });

  it('an Opus round trip keeps a tone', async () => {
    const encoder = new OpusFrameEncoder();
    const decoder = new OpusFrameDecoder();
    await decoder.ready;
    let last: Int16Array = new Int16Array(0);
    for (let k = 0; k < 10; k += 1) {
      const frame = new Int16Array(960);
      for (let i = 0; i < 960; i += 1) frame[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * (k * 960 + i)) / 48000));
      last = decoder.decode(encoder.encode(frame));
    }
    expect(last.length).toBe(960);
    expect(rmsDbfs(last)).toBeGreaterThan(-20);
    decoder.free();
  });

  it('both decoder engines decode speech alike at the media rate, and a broken packet to nothing', async () => {
    expect(DEFAULT_DECODER_ENGINE).toBe('libopus-wasm');
    const encoder = new OpusFrameEncoder();
    const packets = Array.from({ length: 25 }, (_, k) => {
      const frame = new Int16Array(960);
      for (let i = 0; i < 960; i += 1) frame[i] = Math.round(6000 * Math.sin((2 * Math.PI * (300 + 20 * k) * (k * 960 + i)) / 48000));
      return encoder.encode(frame);
    });
    const decodeAll = async (engine: OpusDecoderEngine): Promise<Int16Array[]> => {
      const decoder = new OpusFrameDecoder(MEDIA_RATE, engine);
      expect(decoder.engine).toBe(engine);
      await decoder.ready;
      const out = packets.map((p) => decoder.decode(p).slice());
      expect(decoder.decode(new Uint8Array([0xff, 0xff, 0xff])).length).toBe(0);
      expect(decoder.decode(new Uint8Array(10000)).length).toBe(0);
      // The stream goes on after a broken packet.
      expect(decoder.decode(packets[0]!).length).toBe(320);
      decoder.free();
      return out;
    };
    const a = await decodeAll('libopus-wasm');
    const b = await decodeAll('opus-decoder');
    for (let k = 0; k < packets.length; k += 1) {
      expect(a[k]!.length).toBe(320);
      expect(b[k]!.length).toBe(320);
      // The same libopus underneath: samples differ by float-to-int rounding at most.
      const worst = a[k]!.reduce((m, v, i) => Math.max(m, Math.abs(v - b[k]![i]!)), 0);
      expect(worst).toBeLessThanOrEqual(2);
    }
    expect(rmsDbfs(a[20]!)).toBeGreaterThan(-20);
  });
});

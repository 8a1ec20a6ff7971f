import { describe, expect, it } from 'vitest';
import { decodeDownlink, durationMs, f32leToFloat32, float32ToPcm16, int16ToPcm16, pcm16ToFloat32, rms } from './pcm.ts';
import { FramePacker, UPLINK_FRAME_SAMPLES } from './frame-packer.ts';
import { StreamResampler } from './resampler.ts';

describe('PCM conversion', () => {
  it('writes PCM16 little-endian with clipping, and reads it back', () => {
    const bytes = float32ToPcm16([0, 1, -1, 0.5, 2, -3, Number.NaN]);
    expect(bytes.byteLength).toBe(14);
    const view = new DataView(bytes);
    expect([0, 1, 2, 3, 4, 5, 6].map((i) => view.getInt16(i * 2, true))).toEqual([0, 32767, -32768, 16384, 32767, -32768, 0]);
    // Little-endian on the wire whatever the platform: 32767 is ff 7f.
    expect([...new Uint8Array(bytes).slice(2, 4)]).toEqual([0xff, 0x7f]);
    const back = pcm16ToFloat32(bytes);
    expect(back[1]).toBeCloseTo(32767 / 32768, 6);
    expect(back[2]).toBe(-1);
    expect(back[3]).toBeCloseTo(0.5, 4);
  });

  it('treats all-zero frames as ordinary silence', () => {
    const bytes = float32ToPcm16(new Float32Array(320));
    expect(bytes.byteLength).toBe(640);
    expect(new Int16Array(bytes).every((s) => s === 0)).toBe(true);
    expect(rms(pcm16ToFloat32(bytes))).toBe(0);
  });

  it('converts Int16 and reads views at an offset, ignoring a trailing odd byte', () => {
    const bytes = new Uint8Array(int16ToPcm16(Int16Array.from([-2, 300])));
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes, 1);
    const view = padded.subarray(1, 1 + bytes.length + 1);
    expect([...pcm16ToFloat32(view)].map((s) => Math.round(s * 32768))).toEqual([-2, 300]);
  });

  it('decodes pcm_f32le at unity gain, values beyond ±1 untouched (no limiting)', () => {
    const buf = new ArrayBuffer(12);
    const view = new DataView(buf);
    [0.25, -1.5, 1.25].forEach((v, i) => view.setFloat32(i * 4, v, true));
    expect([...f32leToFloat32(buf)]).toEqual([0.25, -1.5, 1.25]);
    expect([...decodeDownlink(buf, 'pcm_f32le')]).toEqual([0.25, -1.5, 1.25]);
    expect(decodeDownlink(buf, 'pcm16')).toHaveLength(6);
  });

  it('measures rms and durations', () => {
    expect(rms([])).toBe(0);
    expect(rms([0.5, -0.5])).toBeCloseTo(0.5);
    expect(durationMs(320, 16000)).toBe(20);
    expect(durationMs(1, 0)).toBe(0);
  });
});

describe('StreamResampler', () => {
  const tone = (freq: number, rate: number, seconds: number, phase = 0) =>
    Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => 0.5 * Math.sin(2 * Math.PI * freq * (i / rate) + phase));

  it('turns 48 kHz and 44.1 kHz into 16 kHz with the right length, chunk by chunk', () => {
    for (const rate of [48000, 44100]) {
      const r = new StreamResampler(rate, 16000);
      let total = 0;
      const input = tone(440, rate, 1);
      for (let i = 0; i < input.length; i += 128) total += r.process(input.subarray(i, i + 128)).length;
      expect(Math.abs(total - 16000)).toBeLessThanOrEqual(2);
    }
  });

  it('keeps a speech-band tone and removes what would alias', () => {
    const r = new StreamResampler(48000, 16000);
    const kept = r.process(tone(440, 48000, 0.5)).subarray(200);
    expect(rms(kept)).toBeGreaterThan(0.3);
    const r2 = new StreamResampler(48000, 16000);
    const aliased = r2.process(tone(12000, 48000, 0.5)).subarray(200);
    expect(rms(aliased)).toBeLessThan(0.05);
  });

  it('is continuous across chunk boundaries', () => {
    const input = tone(300, 44100, 0.2);
    const whole = new StreamResampler(44100, 16000).process(input);
    const chunked = new StreamResampler(44100, 16000);
    const parts: number[] = [];
    for (let i = 0; i < input.length; i += 441) parts.push(...chunked.process(input.subarray(i, i + 441)));
    expect(parts.length).toBe(whole.length);
    for (let i = 0; i < whole.length; i += 1) expect(parts[i]).toBeCloseTo(whole[i]!, 5);
  });

  it('passes 16 kHz through and upsamples 8 kHz', () => {
    const same = new StreamResampler(16000, 16000);
    const input = tone(200, 16000, 0.01);
    expect([...same.process(input)]).toEqual([...input]);
    expect(Math.abs(new StreamResampler(8000, 16000).process(tone(200, 8000, 0.1)).length - 1600)).toBeLessThanOrEqual(2);
    expect(() => new StreamResampler(0, 16000)).toThrow(RangeError);
  });
});

describe('FramePacker', () => {
  it('emits whole 20 ms frames and keeps the remainder for the next push', () => {
    const packer = new FramePacker(UPLINK_FRAME_SAMPLES);
    expect(packer.push(new Float32Array(300))).toHaveLength(0);
    const frames = packer.push(Float32Array.from({ length: 700 }, (_, i) => i));
    expect(frames.map((f) => f.length)).toEqual([320, 320, 320]);
    expect(frames[0]![300]).toBe(0);
    expect(frames[1]![0]).toBe(20);
    packer.flush();
    expect(packer.push(new Float32Array(319))).toHaveLength(0);
    expect(packer.push(new Float32Array(1))).toHaveLength(1);
  });
});

import { describe, expect, it } from 'vitest';
import { int16ToBytes, Pcm16Reader } from './pcm.ts';

const bytesOf = (samples: number[]): Uint8Array => {
  const out = new Uint8Array(samples.length * 2);
  const view = new DataView(out.buffer);
  samples.forEach((s, i) => view.setInt16(i * 2, s, true));
  return out;
};

describe('Pcm16Reader', () => {
  it('reads whole frames as views of the bytes that arrived: no copy per frame', () => {
    const wire = new Uint8Array(8 + 640);
    wire.set(bytesOf(Array.from({ length: 320 }, (_, i) => i - 160)), 8);
    const samples = new Pcm16Reader().read(wire.subarray(8));
    expect(samples.length).toBe(320);
    expect(samples[0]).toBe(-160);
    expect(samples[319]).toBe(159);
    expect(samples.buffer).toBe(wire.buffer);
  });

  it('copies what cannot be viewed (an odd offset, a byte carried over) and loses no sample', () => {
    const all = [1, -2, 300, -32768, 32767, 7];
    const wire = bytesOf(all);
    const odd = new Uint8Array(wire.length + 1);
    odd.set(wire, 1);
    const reader = new Pcm16Reader();
    // Chunks of 3, 4 and 5 bytes: the first starts at an odd offset, the others after a carry.
    const parts = [odd.subarray(1, 4), odd.subarray(4, 8), odd.subarray(8, 13)].map((p) => Array.from(reader.read(p)));
    expect(parts).toEqual([[1], [-2, 300], [-32768, 32767, 7]]);
  });

  it('carries an odd trailing byte from a viewed chunk into the next one', () => {
    const wire = bytesOf([5, -6, 7]);
    const reader = new Pcm16Reader();
    expect(Array.from(reader.read(wire.subarray(0, 3)))).toEqual([5]);
    expect(Array.from(reader.read(wire.subarray(3)))).toEqual([-6, 7]);
  });
});

describe('int16ToBytes', () => {
  it('gives the little-endian bytes of the samples', () => {
    expect(Array.from(int16ToBytes(Int16Array.from([1, -1, 256])))).toEqual([1, 0, 255, 255, 0, 1]);
  });
});

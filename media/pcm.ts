/**
 * PCM conversions at the edges. Inside the server audio is Int16Array mono at a known rate;
 * wire bytes are little-endian.
 */

/** Wire PCM is little-endian; so are the hosts Node runs on in practice, where it needs no conversion. */
const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Turns a stream of byte chunks into whole PCM16 samples. A WebSocket frame may end mid-sample
 * (SPEC allows any frame length), so the odd byte is carried into the next chunk.
 *
 * The samples are a view of `bytes` when they can be (little-endian host, an even offset, no byte
 * carried over), a copy otherwise: a copy per 20 ms frame per session was garbage the collector
 * had to chase at every scale. Callers treat both `bytes` and the result as read-only.
 */
export class Pcm16Reader {
  private carry: number | undefined;

  read(bytes: Uint8Array): Int16Array {
    if (HOST_LITTLE_ENDIAN && this.carry === undefined && bytes.byteOffset % 2 === 0) {
      const whole = bytes.length >> 1;
      if (whole * 2 < bytes.length) this.carry = bytes[bytes.length - 1];
      return new Int16Array(bytes.buffer, bytes.byteOffset, whole);
    }
    let offset = 0;
    const total = bytes.length + (this.carry === undefined ? 0 : 1);
    const out = new Int16Array(total >> 1);
    let i = 0;
    if (this.carry !== undefined && bytes.length > 0) {
      out[i++] = ((bytes[0]! << 8) | this.carry) << 16 >> 16;
      offset = 1;
      this.carry = undefined;
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (; offset + 1 < bytes.length; offset += 2) out[i++] = view.getInt16(offset, true);
    if (offset < bytes.length) this.carry = bytes[offset];
    return i === out.length ? out : out.subarray(0, i);
  }
}

/** The samples as little-endian bytes: a view of the same memory on a little-endian host (read-only, like the samples). */
export function int16ToBytes(samples: Int16Array): Uint8Array {
  if (HOST_LITTLE_ENDIAN) return new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  const out = new Uint8Array(samples.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < samples.length; i += 1) view.setInt16(i * 2, samples[i]!, true);
  return out;
}

export function int16ToF32leBytes(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < samples.length; i += 1) view.setFloat32(i * 4, samples[i]! / 32768, true);
  return out;
}

export type OutputEncoding = 'pcm16' | 'pcm_f32le';

export function encodePcm(samples: Int16Array, encoding: OutputEncoding): Uint8Array {
  return encoding === 'pcm16' ? int16ToBytes(samples) : int16ToF32leBytes(samples);
}

/** Highest absolute sample value, 0..32768. */
export function peakOf(samples: Int16Array): number {
  let peak = 0;
  for (let i = 0; i < samples.length; i += 1) {
    const v = Math.abs(samples[i]!);
    if (v > peak) peak = v;
  }
  return peak;
}

/** Root-mean-square level in dBFS; -Infinity for digital silence. */
export function rmsDbfs(samples: Int16Array): number {
  if (samples.length === 0) return -Infinity;
  let sum = 0;
  for (let i = 0; i < samples.length; i += 1) sum += samples[i]! * samples[i]!;
  return 10 * Math.log10(sum / samples.length / (32768 * 32768));
}

/** Reads a mono PCM16 WAV file's samples and rate (canonical RIFF as sox, flite and espeak write). */
export function parseWav(bytes: Uint8Array): { samples: Int16Array; sampleRate: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 12;
  let sampleRate = 16000;
  let channels = 1;
  while (offset + 8 <= bytes.length) {
    const id = String.fromCharCode(...bytes.subarray(offset, offset + 4));
    const size = view.getUint32(offset + 4, true);
    if (id === 'fmt ') {
      channels = view.getUint16(offset + 10, true);
      sampleRate = view.getUint32(offset + 12, true);
    } else if (id === 'data') {
      const end = Math.min(bytes.length, offset + 8 + size);
      const all = new Pcm16Reader().read(bytes.subarray(offset + 8, end));
      if (channels === 1) return { samples: all, sampleRate };
      const mono = new Int16Array(Math.floor(all.length / channels));
      for (let i = 0; i < mono.length; i += 1) mono[i] = all[i * channels]!;
      return { samples: mono, sampleRate };
    }
    offset += 8 + size + (size & 1);
  }
  throw new Error('WAV has no data chunk');
}

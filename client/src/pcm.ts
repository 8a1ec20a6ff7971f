/**
 * Sample format conversions for the wire: uplink PCM16 little-endian, downlink pcm16 or
 * pcm_f32le (SPEC: decode per ready.audio). Explicit little-endian through DataView, so the
 * result does not depend on the platform's byte order.
 */

/** Float32 samples (nominally -1..1; clipped) → PCM16 little-endian bytes, in a fresh buffer. */
export function float32ToPcm16(samples: ArrayLike<number>): ArrayBuffer {
  const out = new ArrayBuffer(samples.length * 2);
  const view = new DataView(out);
  for (let i = 0; i < samples.length; i += 1) {
    const s = samples[i] ?? 0;
    const clipped = s > 1 ? 1 : s < -1 ? -1 : Number.isNaN(s) ? 0 : s;
    view.setInt16(i * 2, clipped < 0 ? Math.round(clipped * 32768) : Math.round(clipped * 32767), true);
  }
  return out;
}

/** Int16 samples → PCM16 little-endian bytes, in a fresh buffer. */
export function int16ToPcm16(samples: Int16Array): ArrayBuffer {
  const out = new ArrayBuffer(samples.length * 2);
  const view = new DataView(out);
  for (let i = 0; i < samples.length; i += 1) view.setInt16(i * 2, samples[i]!, true);
  return out;
}

/** PCM16 little-endian bytes → Float32 -1..1. A trailing odd byte is ignored. */
export function pcm16ToFloat32(bytes: ArrayBuffer | ArrayBufferView): Float32Array {
  const view = asView(bytes);
  const out = new Float32Array(Math.floor(view.byteLength / 2));
  for (let i = 0; i < out.length; i += 1) out[i] = view.getInt16(i * 2, true) / 32768;
  return out;
}

/** pcm_f32le bytes → Float32, unchanged in value (unity gain, no limiting). */
export function f32leToFloat32(bytes: ArrayBuffer | ArrayBufferView): Float32Array {
  const view = asView(bytes);
  const out = new Float32Array(Math.floor(view.byteLength / 4));
  for (let i = 0; i < out.length; i += 1) out[i] = view.getFloat32(i * 4, true);
  return out;
}

export type DownlinkEncoding = 'pcm16' | 'pcm_f32le';

export function decodeDownlink(bytes: ArrayBuffer | ArrayBufferView, encoding: DownlinkEncoding): Float32Array {
  return encoding === 'pcm_f32le' ? f32leToFloat32(bytes) : pcm16ToFloat32(bytes);
}

/** Root mean square of a block, 0 for an empty one. */
export function rms(samples: ArrayLike<number>): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i += 1) {
    const s = samples[i] ?? 0;
    sum += s * s;
  }
  return Math.sqrt(sum / samples.length);
}

/** Duration in ms of `samples` samples at `sampleRate`. */
export function durationMs(samples: number, sampleRate: number): number {
  return sampleRate > 0 ? (samples / sampleRate) * 1000 : 0;
}

function asView(bytes: ArrayBuffer | ArrayBufferView): DataView {
  return bytes instanceof ArrayBuffer ? new DataView(bytes) : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

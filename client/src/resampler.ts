/**
 * Streaming mono resampler for capture: the AudioContext runs at the device rate (44.1 or
 * 48 kHz, sometimes others) and the uplink wants 16 kHz. Downsampling first runs a short
 * windowed-sinc low-pass at the target's Nyquist (so the 4-8 kHz band of a 48 kHz mic does not
 * alias into speech), then interpolates linearly. State carries across calls, so chunk
 * boundaries leave no clicks.
 */
export class StreamResampler {
  private readonly step: number;
  private readonly taps: Float32Array;
  /** The last taps.length-1 input samples of the previous call, for the filter's history. */
  private history: Float32Array;
  /** Filtered samples not yet consumed by interpolation (at most two). */
  private carry: number[] = [];
  /** Read position in the filtered stream, relative to carry[0]. */
  private position = 0;

  constructor(
    readonly inputRate: number,
    readonly outputRate: number,
  ) {
    if (!(inputRate > 0) || !(outputRate > 0)) throw new RangeError('sample rates must be positive');
    this.step = inputRate / outputRate;
    this.taps = inputRate > outputRate ? lowPassTaps(outputRate / 2 / inputRate, 31) : new Float32Array([1]);
    this.history = new Float32Array(this.taps.length - 1);
  }

  process(input: Float32Array): Float32Array {
    if (this.inputRate === this.outputRate) return input.slice();
    const filtered = this.filter(input);
    const stream = this.carry.length ? concat(Float32Array.from(this.carry), filtered) : filtered;
    const out: number[] = [];
    let pos = this.position;
    while (pos + 1 < stream.length) {
      const i = Math.floor(pos);
      const frac = pos - i;
      out.push(stream[i]! * (1 - frac) + stream[i + 1]! * frac);
      pos += this.step;
    }
    const keepFrom = Math.min(Math.floor(pos), stream.length);
    this.carry = Array.from(stream.subarray(keepFrom));
    this.position = pos - keepFrom;
    return Float32Array.from(out);
  }

  private filter(input: Float32Array): Float32Array {
    const n = this.taps.length;
    if (n === 1) return input.slice();
    const padded = concat(this.history, input);
    const out = new Float32Array(input.length);
    for (let i = 0; i < input.length; i += 1) {
      let acc = 0;
      for (let k = 0; k < n; k += 1) acc += padded[i + k]! * this.taps[n - 1 - k]!;
      out[i] = acc;
    }
    this.history = padded.slice(padded.length - (n - 1));
    return out;
  }
}

/** Windowed-sinc low-pass (Blackman), cutoff as a fraction of the sample rate, unity DC gain. */
function lowPassTaps(cutoff: number, count: number): Float32Array {
  const taps = new Float32Array(count);
  const mid = (count - 1) / 2;
  const fc = cutoff * 0.9; // a little below Nyquist, so the transition band stays out of range
  let sum = 0;
  for (let i = 0; i < count; i += 1) {
    const x = i - mid;
    const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
    const window = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (count - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (count - 1));
    taps[i] = sinc * window;
    sum += taps[i]!;
  }
  for (let i = 0; i < count; i += 1) taps[i]! /= sum;
  return taps;
}

function concat(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

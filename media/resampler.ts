/**
 * Streaming polyphase resampler (windowed-sinc low-pass), one instance per direction per
 * session. Rational ratios (all the rates SPEC allows) get a small precomputed filter table, so
 * the per-sample cost is a fixed dot product and no state is lost between chunks.
 */

const HALF_TAPS = 8;

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

export class Resampler {
  readonly passthrough: boolean;
  private readonly up: number;
  private readonly down: number;
  private readonly table: Float32Array[];
  private history: Float32Array;
  /** Position of the next output sample, in input samples, relative to history start. */
  private phaseNum = 0;
  private basis = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    this.passthrough = fromRate === toRate;
    const g = gcd(fromRate, toRate);
    this.up = toRate / g;
    this.down = fromRate / g;
    // Cut-off at the lower Nyquist, a little under it to keep the transition band clean.
    const cutoff = (0.95 * Math.min(fromRate, toRate)) / fromRate;
    this.table = [];
    for (let phase = 0; phase < this.up; phase += 1) {
      const frac = phase / this.up;
      const taps = new Float32Array(HALF_TAPS * 2);
      let sum = 0;
      for (let k = 0; k < HALF_TAPS * 2; k += 1) {
        const x = k - (HALF_TAPS - 1) - frac;
        const sinc = x === 0 ? 1 : Math.sin(Math.PI * cutoff * x) / (Math.PI * cutoff * x);
        const window = 0.5 + 0.5 * Math.cos((Math.PI * x) / (HALF_TAPS + 1));
        taps[k] = sinc * window;
        sum += taps[k]!;
      }
      for (let k = 0; k < taps.length; k += 1) taps[k]! /= sum;
      this.table.push(taps);
    }
    this.history = new Float32Array(HALF_TAPS * 2 - 1);
    this.basis = HALF_TAPS - 1;
  }

  process(input: Int16Array): Int16Array {
    if (this.passthrough) return input;
    const historyLength = this.history.length;
    const buffer = new Float32Array(historyLength + input.length);
    buffer.set(this.history, 0);
    for (let i = 0; i < input.length; i += 1) buffer[historyLength + i] = input[i]!;
    // Output sample n sits at input position basis + phaseNum/up; written straight into a typed
    // array sized for the most this chunk can yield (no per-sample allocation on the audio path).
    const capacity = Math.ceil(((buffer.length - this.basis) * this.up) / this.down) + 1;
    const out = new Int16Array(Math.max(0, capacity));
    let count = 0;
    const taps0 = HALF_TAPS - 1;
    const width = HALF_TAPS * 2;
    for (;;) {
      const whole = this.basis + Math.floor(this.phaseNum / this.up);
      if (whole + HALF_TAPS >= buffer.length) break;
      const taps = this.table[this.phaseNum % this.up]!;
      const start = whole - taps0;
      let acc = 0;
      for (let k = 0; k < width; k += 1) acc += buffer[start + k]! * taps[k]!;
      const v = Math.round(acc);
      out[count++] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      this.phaseNum += this.down;
    }
    // Keep enough history for the next chunk and rebase positions onto it.
    const consumedWhole = this.basis + Math.floor(this.phaseNum / this.up);
    const keepFrom = Math.max(0, consumedWhole - taps0);
    this.history = buffer.slice(keepFrom);
    this.basis = consumedWhole - keepFrom;
    this.phaseNum %= this.up;
    return out.subarray(0, count);
  }
}

/**
 * A soft background bed, synthesised (no recording, so no licence to track): brown noise
 * shaped by a slow swell, like a quiet room. Level: about -42 dBFS RMS (BED_LEVEL_DBFS), well
 * under speech (flite speaks near -20 dBFS) and audible in silence on headphones.
 */
export const BED_LEVEL_DBFS = -42;

export class BackgroundBed {
  private brown = 0;
  private phase = 0;
  private seed = 0x2545f491;
  private readonly gain: number;

  constructor(private readonly sampleRate = 48000) {
    // Brown noise from this integrator has an RMS near 0.17 before gain.
    this.gain = (10 ** (BED_LEVEL_DBFS / 20) / 0.17) * 32767;
  }

  /** Adds the next `samples.length` samples of bed into `samples`, in place, saturating. */
  mixInto(samples: Int16Array): void {
    const swellStep = (2 * Math.PI * 0.07) / this.sampleRate;
    for (let i = 0; i < samples.length; i += 1) {
      this.seed ^= this.seed << 13;
      this.seed ^= this.seed >>> 17;
      this.seed ^= this.seed << 5;
      const white = ((this.seed >>> 0) / 0xffffffff) * 2 - 1;
      this.brown = (this.brown + 0.02 * white) * 0.998;
      this.phase += swellStep;
      const swell = 0.8 + 0.2 * Math.sin(this.phase);
      const v = samples[i]! + this.brown * swell * this.gain;
      samples[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : Math.round(v);
    }
  }
}

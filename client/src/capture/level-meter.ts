/** Frames per `mic_level` event: 5 × 20 ms, ten readings a second. */
const FRAMES_PER_READING = 5;

/**
 * The microphone's level for meters: peak (0–1) and RMS in dBFS (floor −100) over the last
 * 100 ms of captured frames, before muting and the echo guard (what the microphone hears).
 */
export class LevelMeter {
  private frames = 0;
  private peak = 0;
  private sumSquares = 0;
  private samples = 0;

  constructor(private readonly report: (level: { peak: number; dbfs: number }) => void) {}

  push(frame: Float32Array): void {
    for (let i = 0; i < frame.length; i += 1) {
      const s = frame[i]!;
      const magnitude = s < 0 ? -s : s;
      if (magnitude > this.peak) this.peak = magnitude;
      this.sumSquares += s * s;
    }
    this.samples += frame.length;
    this.frames += 1;
    if (this.frames < FRAMES_PER_READING) return;
    const rms = Math.sqrt(this.sumSquares / Math.max(1, this.samples));
    this.report({ peak: Math.min(1, this.peak), dbfs: rms > 0 ? Math.max(-100, 20 * Math.log10(rms)) : -100 });
    this.frames = 0;
    this.peak = 0;
    this.sumSquares = 0;
    this.samples = 0;
  }
}

/**
 * Watches raw uplink audio for a microphone that delivers nothing useful. Windows: 3000 ms of
 * exact zeros → `digital_silence` (muted or broken capture); 5000 ms whose peak stays at or
 * below 64 (about -54 dBFS) → `near_silent` (wrong device, gain at zero). One warning per
 * episode; any louder sample ends the episode. Never fatal.
 */

export const DIGITAL_SILENCE_MS = 3000;
export const NEAR_SILENT_MS = 5000;
export const NEAR_SILENT_PEAK = 64;

export interface SilentMicWarning {
  reason: 'digital_silence' | 'near_silent';
  duration_ms: number;
  peak: number;
}

export class SilenceMonitor {
  private zeroMs = 0;
  private quietMs = 0;
  private quietPeak = 0;
  private warnedDigital = false;
  private warnedQuiet = false;

  constructor(private readonly sampleRate: number) {}

  push(samples: Int16Array): SilentMicWarning | undefined {
    if (samples.length === 0) return undefined;
    let peak = 0;
    for (let i = 0; i < samples.length; i += 1) {
      const v = Math.abs(samples[i]!);
      if (v > peak) peak = v;
    }
    const ms = (samples.length * 1000) / this.sampleRate;
    if (peak === 0) {
      this.zeroMs += ms;
    } else {
      this.zeroMs = 0;
      this.warnedDigital = false;
    }
    if (peak <= NEAR_SILENT_PEAK) {
      this.quietMs += ms;
      this.quietPeak = Math.max(this.quietPeak, peak);
    } else {
      this.quietMs = 0;
      this.quietPeak = 0;
      this.warnedQuiet = false;
    }
    if (!this.warnedDigital && this.zeroMs >= DIGITAL_SILENCE_MS) {
      this.warnedDigital = true;
      this.warnedQuiet = true;
      return { reason: 'digital_silence', duration_ms: Math.round(this.zeroMs), peak: 0 };
    }
    if (!this.warnedQuiet && this.quietPeak > 0 && this.quietMs >= NEAR_SILENT_MS) {
      this.warnedQuiet = true;
      return { reason: 'near_silent', duration_ms: Math.round(this.quietMs), peak: this.quietPeak };
    }
    return undefined;
  }
}

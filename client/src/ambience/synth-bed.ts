import type { AmbienceBed } from './ambience-controller.ts';

const LOOP_S = 4;
const CROSSFADE_S = 0.25;

/**
 * A quiet synthesized room bed, no files: brown noise (a soft rumble) through a low-pass, looped
 * with a crossfaded seam, behind a gain that fades. Built on first fade-in; the noise source
 * keeps running silently between fades (cheap) until stop().
 */
export class SynthAmbienceBed implements AmbienceBed {
  private source: AudioBufferSourceNode | undefined;
  private gain: GainNode | undefined;

  constructor(private readonly ctx: AudioContext) {}

  fadeIn(level: number, seconds: number): void {
    const gain = this.build();
    const now = this.ctx.currentTime;
    gain.gain.cancelScheduledValues(now);
    gain.gain.setValueAtTime(gain.gain.value, now);
    gain.gain.linearRampToValueAtTime(level, now + Math.max(0.01, seconds));
  }

  fadeOut(seconds: number): void {
    if (!this.gain) return;
    const now = this.ctx.currentTime;
    this.gain.gain.cancelScheduledValues(now);
    this.gain.gain.setValueAtTime(this.gain.gain.value, now);
    this.gain.gain.linearRampToValueAtTime(0, now + Math.max(0.01, seconds));
  }

  stop(): void {
    try {
      this.source?.stop();
    } catch {
      // already stopped
    }
    this.source?.disconnect();
    this.gain?.disconnect();
    this.source = undefined;
    this.gain = undefined;
  }

  private build(): GainNode {
    if (this.gain) return this.gain;
    const ctx = this.ctx;
    const source = ctx.createBufferSource();
    source.buffer = brownNoise(ctx);
    source.loop = true;
    const lowPass = ctx.createBiquadFilter();
    lowPass.type = 'lowpass';
    lowPass.frequency.value = 700;
    const gain = ctx.createGain();
    gain.gain.value = 0;
    source.connect(lowPass).connect(gain).connect(ctx.destination);
    source.start();
    this.source = source;
    this.gain = gain;
    return gain;
  }
}

function brownNoise(ctx: AudioContext): AudioBuffer {
  const rate = ctx.sampleRate;
  const length = Math.round(rate * LOOP_S);
  const fade = Math.round(rate * CROSSFADE_S);
  const raw = new Float32Array(length + fade);
  let last = 0;
  for (let i = 0; i < raw.length; i += 1) {
    last = (last + 0.02 * (Math.random() * 2 - 1)) / 1.02;
    raw[i] = last * 3.5;
  }
  // The loop's end blends into its start, so the seam is inaudible.
  for (let i = 0; i < fade; i += 1) {
    const t = i / fade;
    raw[i] = raw[i]! * t + raw[length + i]! * (1 - t);
  }
  const buffer = ctx.createBuffer(1, length, rate);
  buffer.copyToChannel(raw.subarray(0, length) as Float32Array<ArrayBuffer>, 0);
  return buffer;
}

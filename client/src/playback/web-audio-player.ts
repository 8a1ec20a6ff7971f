import type { AudioPlayer } from '../types.ts';

/** Start a little ahead of "now" when the queue was empty, so the first chunks do not underrun. */
const LEAD_S = 0.05;

/**
 * The default player: Web Audio, each chunk an AudioBuffer scheduled right after the previous
 * one (gapless), straight into the destination at unity gain: no gain stage, no compressor, no
 * limiter. The AudioContext is created on first use or in unlockAudio().
 */
export class WebAudioPlayer implements AudioPlayer {
  private ctx: AudioContext | undefined;
  private nextTime = 0;
  private readonly sources = new Set<AudioBufferSourceNode>();

  /** The player's AudioContext (created on demand); the ambience bed shares it. */
  context(): AudioContext {
    this.ctx ??= new AudioContext();
    return this.ctx;
  }

  enqueue(samples: Float32Array, sampleRate: number): void {
    if (samples.length === 0) return;
    const ctx = this.context();
    const buffer = ctx.createBuffer(1, samples.length, sampleRate);
    buffer.copyToChannel(samples as Float32Array<ArrayBuffer>, 0);
    const source = ctx.createBufferSource();
    source.buffer = buffer;
    source.connect(ctx.destination);
    const startAt = Math.max(ctx.currentTime + (this.nextTime > ctx.currentTime ? 0 : LEAD_S), this.nextTime);
    source.start(startAt);
    this.nextTime = startAt + buffer.duration;
    this.sources.add(source);
    source.onended = () => {
      this.sources.delete(source);
      source.disconnect();
    };
  }

  clear(): { remainingMs: number } {
    const remainingMs = this.bufferedMs();
    for (const source of this.sources) {
      try {
        source.stop();
      } catch {
        // never started or already stopped
      }
      source.disconnect();
    }
    this.sources.clear();
    this.nextTime = 0;
    return { remainingMs };
  }

  bufferedMs(): number {
    if (!this.ctx) return 0;
    return Math.max(0, Math.round((this.nextTime - this.ctx.currentTime) * 1000));
  }

  async unlock(): Promise<void> {
    const ctx = this.context();
    if (ctx.state === 'suspended') await ctx.resume();
  }

  close(): void {
    this.clear();
    void this.ctx?.close().catch(() => undefined);
    this.ctx = undefined;
  }
}

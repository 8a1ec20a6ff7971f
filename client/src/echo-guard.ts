import { rms } from './pcm.ts';

/**
 * The optional library-side echo guard (startMic({sdkAec: true})), on top of the browser's echo
 * cancellation: while assistant audio is audible, a microphone frame much quieter than the
 * playback is residual echo and goes out as silence; speech louder than that passes, so the user
 * can still barge in. Pure timing on an injected clock; the client tells it what it plays.
 */
export class EchoGuard {
  private audibleUntil = 0;
  private playbackLevel = 0;

  constructor(
    private readonly now: () => number = () => performance.now(),
    /** Frames below playbackLevel × ratio are treated as echo. */
    private readonly ratio = 0.5,
    /** Extra time after the last queued sample during which echo may still arrive (ms). */
    private readonly tailMs = 150,
  ) {}

  /** The client queued `ms` of playback with these samples. */
  notePlayback(samples: Float32Array, ms: number): void {
    const now = this.now();
    this.audibleUntil = Math.max(this.audibleUntil, now) + ms;
    const level = rms(samples);
    // Follow the playback level quickly up, slowly down, so quiet gaps do not open the gate.
    this.playbackLevel = level > this.playbackLevel ? level : this.playbackLevel * 0.8 + level * 0.2;
  }

  /** Playback stopped (barge-in, reset): nothing is audible any more. */
  clear(): void {
    this.audibleUntil = 0;
    this.playbackLevel = 0;
  }

  /** The frame to send: the input, or silence of the same length when it is only echo. */
  filter(frame: Float32Array): Float32Array {
    if (this.now() > this.audibleUntil + this.tailMs || this.playbackLevel === 0) return frame;
    return rms(frame) < this.playbackLevel * this.ratio ? new Float32Array(frame.length) : frame;
  }
}

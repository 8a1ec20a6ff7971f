/**
 * Cuts a stream of samples into fixed frames (20 ms at 16 kHz = 320 samples for the uplink).
 * The remainder waits for the next push; flush() drops it (a partial frame is never sent).
 */
export class FramePacker {
  private readonly pending: Float32Array;
  private fill = 0;

  constructor(readonly frameSamples: number) {
    if (!(frameSamples > 0)) throw new RangeError('frameSamples must be positive');
    this.pending = new Float32Array(frameSamples);
  }

  /** Returns the frames completed by this push (fresh arrays the caller may keep). */
  push(samples: Float32Array): Float32Array[] {
    const frames: Float32Array[] = [];
    let offset = 0;
    while (offset < samples.length) {
      const take = Math.min(this.frameSamples - this.fill, samples.length - offset);
      this.pending.set(samples.subarray(offset, offset + take), this.fill);
      this.fill += take;
      offset += take;
      if (this.fill === this.frameSamples) {
        frames.push(this.pending.slice());
        this.fill = 0;
      }
    }
    return frames;
  }

  flush(): void {
    this.fill = 0;
  }
}

export const UPLINK_RATE = 16000;
export const UPLINK_FRAME_SAMPLES = 320; // 20 ms at 16 kHz

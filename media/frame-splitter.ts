import type { Processor, Sink } from './processor.ts';

/**
 * Cuts a PCM stream into frames of exactly `size` samples (the VAD's 20 ms at 16 kHz), whatever
 * the sizes it arrives in; a partial frame waits for the next push. Clients send whole frames:
 * those go on as views of what was pushed, and only audio cut across pushes is copied into a
 * frame of its own. Frames are read-only for the sink, which may keep them; the caller must not
 * write to samples it pushed.
 */
export class FrameSplitter implements Processor<Int16Array> {
  /** A frame being filled across pushes; undefined when the next push starts on a frame boundary. */
  private frame: Int16Array | undefined;
  private fill = 0;

  constructor(
    readonly size: number,
    private readonly sink: Sink<Int16Array>,
  ) {}

  push(samples: Int16Array): void {
    let offset = 0;
    while (offset < samples.length) {
      if (this.fill === 0 && samples.length - offset >= this.size) {
        // A push of exactly one frame (what clients send) goes on as it is: no view to allocate.
        this.sink(offset === 0 && samples.length === this.size ? samples : samples.subarray(offset, offset + this.size));
        offset += this.size;
        continue;
      }
      this.frame ??= new Int16Array(this.size);
      const take = Math.min(this.size - this.fill, samples.length - offset);
      this.frame.set(samples.subarray(offset, offset + take), this.fill);
      this.fill += take;
      offset += take;
      if (this.fill === this.size) {
        const frame = this.frame;
        this.frame = undefined;
        this.fill = 0;
        this.sink(frame);
      }
    }
  }

  /** Drops a partial frame (a new stream starts). */
  reset(): void {
    this.frame = undefined;
    this.fill = 0;
  }
}

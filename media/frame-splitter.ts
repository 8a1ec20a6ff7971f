import type { Processor, Sink } from './processor.ts';

/**
 * Cuts a PCM stream into frames of exactly `size` samples (the VAD's 20 ms at 16 kHz), whatever
 * the sizes it arrives in; a partial frame waits for the next push. Each frame is a copy the sink
 * may keep.
 */
export class FrameSplitter implements Processor<Int16Array> {
  private readonly frame: Int16Array;
  private fill = 0;

  constructor(
    readonly size: number,
    private readonly sink: Sink<Int16Array>,
  ) {
    this.frame = new Int16Array(size);
  }

  push(samples: Int16Array): void {
    let offset = 0;
    while (offset < samples.length) {
      const take = Math.min(this.size - this.fill, samples.length - offset);
      this.frame.set(samples.subarray(offset, offset + take), this.fill);
      this.fill += take;
      offset += take;
      if (this.fill === this.size) {
        this.fill = 0;
        this.sink(this.frame.slice());
      }
    }
  }

  /** Drops a partial frame (a new stream starts). */
  reset(): void {
    this.fill = 0;
  }
}

import { sharedPacerClock, type PacerClock, type Ticking } from './pacer-clock.ts';
import type { Processor } from './processor.ts';

export const DOWNLINK_FRAME_MS = 20;

export interface PacerOptions {
  sampleRate: number;
  /** Audio sent ahead of real time so the client's jitter buffer never runs dry. */
  leadMs?: number;
  send(frame: Int16Array): void;
  /** How late each frame the clock sends left, against its slot (ms): the host's metrics hook. */
  onLate?(ms: number): void;
  clock?: PacerClock;
}

/**
 * Sends queued PCM in 20 ms frames at real-time pace. Because at most `leadMs` of audio is ever
 * ahead of the listener, clearing the queue stops the downlink within one frame of a barge-in.
 */
export class DownlinkPacer implements Ticking, Processor<Int16Array> {
  private readonly frameSamples: number;
  /**
   * Queued audio as it was handed over, not copied: frames leave as views into these chunks (only
   * a frame that straddles two chunks is copied). A frame per allocation made a 20 ms array and
   * its backing store per frame per session; at a few hundred sessions that churn drove garbage
   * collection and grew the malloc heap by ~0.5 MB per session.
   */
  private readonly chunks: Int16Array[] = [];
  /** Read position in chunks[0]. */
  private head = 0;
  /** Samples queued and not yet sent (the silence that pads a flushed stream included). */
  private queued = 0;
  /** Ideal play time of the next frame; undefined while idle. */
  private nextAt: number | undefined;
  private readonly leadMs: number;
  private readonly clock: PacerClock;
  private idleWaiters: Array<() => void> = [];
  /** Set while paused (a possible barge-in): nothing is sent, nothing is dropped. */
  private pausedAt: number | undefined;
  /** Milliseconds of audio handed to the transport since the last resetCounters(). */
  sentMs = 0;

  constructor(private readonly options: PacerOptions) {
    this.frameSamples = Math.round((options.sampleRate * DOWNLINK_FRAME_MS) / 1000);
    this.leadMs = options.leadMs ?? 60;
    this.clock = options.clock ?? sharedPacerClock;
  }

  get queuedMs(): number {
    return (this.queued * 1000) / this.options.sampleRate;
  }

  /** Audio handed over whose play time (on this pacer's timeline) is still ahead of `now` (of the pause, while paused). */
  aheadMs(now: number): number {
    return this.nextAt === undefined ? 0 : Math.max(0, this.nextAt - (this.pausedAt ?? now));
  }

  get paused(): boolean {
    return this.pausedAt !== undefined;
  }

  /** Stops sending, keeping every queued frame, until resume() or clear(). */
  pause(): void {
    if (this.pausedAt !== undefined) return;
    this.pausedAt = performance.now();
    if (this.nextAt !== undefined) this.clock.remove(this);
  }

  /**
   * Sends on from the first frame not sent. keepTimeline (a transport that holds audio, whose
   * held frames resume with us): the run's timeline moves by the pause, so what was handed over
   * ahead stays as far ahead. Otherwise the listener's buffer has drained: a fresh run opens with
   * its lead.
   */
  resume(keepTimeline: boolean): void {
    const at = this.pausedAt;
    if (at === undefined) return;
    this.pausedAt = undefined;
    if (this.nextAt !== undefined) {
      if (keepTimeline) {
        this.nextAt += performance.now() - at;
        this.clock.add(this);
      } else {
        this.nextAt = undefined;
      }
    }
    this.start();
  }

  get idle(): boolean {
    return this.queued === 0;
  }

  /** Whole frames ready to leave. */
  private get frames(): number {
    return Math.floor(this.queued / this.frameSamples);
  }

  /**
   * Queues PCM at the pacer's rate; it leaves in 20 ms frames on the clock (the sink is `send`).
   * The pacer keeps `samples` itself and sends views of it: the caller hands it over and must not
   * write to it afterwards.
   */
  push(samples: Int16Array): void {
    if (samples.length > 0) {
      this.chunks.push(samples);
      this.queued += samples.length;
    }
    this.start();
  }

  /** End of a stream: the last partial frame goes out padded with silence. */
  flush(): void {
    const partial = this.queued % this.frameSamples;
    if (partial > 0) {
      this.chunks.push(new Int16Array(this.frameSamples - partial));
      this.queued += this.frameSamples - partial;
    }
    this.start();
  }

  /** Drops everything not yet sent; returns how much audio was dropped. */
  clear(): number {
    const dropped = this.queuedMs;
    this.chunks.length = 0;
    this.head = 0;
    this.queued = 0;
    this.stop();
    this.pausedAt = undefined;
    this.wakeIdle();
    return dropped;
  }

  /** Resolves once everything queued so far has been sent. */
  whenIdle(): Promise<void> {
    if (this.frames === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    this.clear();
  }

  tick(now: number): void {
    if (this.pausedAt === undefined) this.sendDue(now, true);
  }

  private sendDue(now: number, onClock: boolean): void {
    while (this.queued >= this.frameSamples && this.nextAt !== undefined && this.nextAt - this.leadMs <= now) {
      const frame = this.takeFrame();
      // The lead a run opens with leaves at once by design; only frames the clock sends count.
      if (onClock) this.options.onLate?.(performance.now() - (this.nextAt - this.leadMs));
      this.options.send(frame);
      this.sentMs += DOWNLINK_FRAME_MS;
      this.nextAt += DOWNLINK_FRAME_MS;
    }
    if (this.frames > 0) return;
    this.wakeIdle();
    // The run lasts while audio handed over is still playing: audio queued meanwhile (the next
    // slice of a sentence, a streaming TTS's next chunk) continues its timeline. Once it has
    // played out, the next frame starts a fresh timeline instead of bursting to catch up on
    // time the producer lost. (Ending the run on the first empty queue sent every slice shorter
    // than the lead at once.)
    if (this.nextAt === undefined || now >= this.nextAt) this.stop();
  }

  /** The next whole frame: a view into its chunk, or a copy when it straddles two. */
  private takeFrame(): Int16Array {
    const size = this.frameSamples;
    this.queued -= size;
    const first = this.chunks[0]!;
    if (first.length - this.head >= size) {
      const frame = first.subarray(this.head, this.head + size);
      this.head += size;
      if (this.head === first.length) this.dropHead();
      return frame;
    }
    const frame = new Int16Array(size);
    for (let filled = 0; filled < size; ) {
      const chunk = this.chunks[0]!;
      const take = Math.min(size - filled, chunk.length - this.head);
      frame.set(chunk.subarray(this.head, this.head + take), filled);
      filled += take;
      this.head += take;
      if (this.head === chunk.length) this.dropHead();
    }
    return frame;
  }

  private dropHead(): void {
    this.chunks.shift();
    this.head = 0;
  }

  private start(): void {
    if (this.frames === 0 || this.pausedAt !== undefined) return;
    const now = performance.now();
    // A run whose audio has played out is over, even if no tick has said so yet.
    if (this.nextAt !== undefined && now >= this.nextAt) this.stop();
    if (this.nextAt === undefined) {
      this.clock.add(this);
      // On the clock's grid, so every later frame is due exactly when a tick runs.
      // Half a tick ahead at least, so the packets pushed right after this one join the burst.
      this.nextAt = this.clock.align(now + this.clock.intervalMs / 2);
    }
    // Send what is due now (a new run's lead) rather than waiting for the next tick.
    this.sendDue(now, false);
  }

  private stop(): void {
    if (this.nextAt === undefined) return;
    this.nextAt = undefined;
    this.clock.remove(this);
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

import { Arrivals } from '../../media/testing/arrivals.ts';
import type { LoopStalls } from '../../media/testing/loop-stalls.ts';
import { ServerFrame } from '../protocol/server.ts';

type Frame = ServerFrame;
export type FrameOf<T extends Frame['type']> = Extract<Frame, { type: T }>;

export interface Closed {
  code: number;
  reason: string;
}

/**
 * What a client received, in order: JSON frames (each checked against SPEC's server schemas,
 * closed frames reject extra fields), binary audio, and the close. Waits resolve on arrival,
 * never by polling, so they work the same on the real clock and on vitest's fake one (the
 * timeout is then simulated time). Shared by the socket client of the end-to-end tests and the
 * recording transport of the unit tests.
 */
export class FrameLog {
  readonly frames: Frame[] = [];
  /** performance.now() when each of `frames` arrived. */
  readonly arrivals: number[] = [];
  readonly audio: Buffer[] = [];
  /** performance.now() when each of `audio` arrived. */
  readonly audioArrivals: number[] = [];
  readonly violations: string[] = [];
  closed: Closed | undefined;
  private readonly waits = new Arrivals();

  /** A JSON frame as it came off the wire; `at`: when it arrived (before parsing). */
  recordFrame(raw: unknown, at = performance.now()): void {
    const parsed = ServerFrame.safeParse(raw);
    if (!parsed.success) this.violations.push(`${JSON.stringify(raw)}: ${parsed.error.message}`);
    this.frames.push(raw as Frame);
    this.arrivals.push(at);
    this.waits.notify();
  }

  recordAudio(bytes: Buffer, at = performance.now()): void {
    this.audio.push(bytes);
    this.audioArrivals.push(at);
    this.waits.notify();
  }

  recordClose(closed: Closed): void {
    if (this.closed) return;
    this.closed = closed;
    this.waits.notify();
  }

  /** Resolves with the first frame (from `after` on) that matches; rejects after `timeoutMs`. */
  waitFor<T extends Frame['type']>(type: T, predicate: (frame: FrameOf<T>) => boolean = () => true, timeoutMs = 5000, after = 0): Promise<FrameOf<T>> {
    const find = (): FrameOf<T> | undefined => this.frames.slice(after).find((f): f is FrameOf<T> => f.type === type && predicate(f as FrameOf<T>));
    return this.until(find, timeoutMs, `${type}`, true);
  }

  /** Resolves once more than `count` audio frames arrived. */
  waitAudio(count = 0, timeoutMs = 5000): Promise<void> {
    return this.until(() => (this.audio.length > count ? true : undefined), timeoutMs, `audio frame #${count + 1}`, true).then(() => undefined);
  }

  waitClose(timeoutMs = 5000): Promise<Closed> {
    return this.until(() => this.closed, timeoutMs, 'the close', false);
  }

  /**
   * Silences in the downlink longer than `minMs` that began at or after `since` (performance.now()),
   * in ms. With `stalls` (a server in this process), each silence less the longest stall of the
   * loop within it: a stall silences the wire, but it is no pause of the product's.
   */
  audioGaps(minMs: number, since = 0, stalls?: LoopStalls): number[] {
    const at = this.audioArrivals;
    const gap = (from: number, to: number): number => to - from - (stalls?.longestWithin(from, to) ?? 0);
    return at.slice(1).map((t, i) => ({ from: at[i]!, ms: gap(at[i]!, t) })).filter((g) => g.ms > minMs && g.from >= since).map((g) => g.ms);
  }

  /** When `frame` (one of `frames`) arrived. */
  arrivalOf(frame: Frame): number {
    const i = this.frames.indexOf(frame);
    if (i < 0) throw new Error('not a frame of this client');
    return this.arrivals[i]!;
  }

  /** Frames of one type, in arrival order. */
  all<T extends Frame['type']>(type: T): FrameOf<T>[] {
    return this.frames.filter((f): f is FrameOf<T> => f.type === type);
  }

  /** Types of the frames that carry this turn id, in order. */
  turnTypes(turnId: string): string[] {
    return this.frames.filter((f) => 'turn_id' in f && f.turn_id === turnId).map((f) => f.type);
  }

  assertProtocol(): void {
    if (this.violations.length > 0) throw new Error(`protocol violations:\n${this.violations.join('\n')}`);
  }

  describe(): string {
    return this.frames.map((f) => f.type).join(',');
  }

  private until<R>(check: () => R | undefined, timeoutMs: number, what: string, failOnClose: boolean): Promise<R> {
    const closed = (): string | undefined => (failOnClose && this.closed ? `closed (${this.closed.code} ${this.closed.reason})` : undefined);
    return this.waits.until(check, timeoutMs, () => `${what}; frames: ${this.describe()}`, closed);
  }
}

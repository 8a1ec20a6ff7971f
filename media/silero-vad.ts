import { FvadClassifier, loadFvad } from './fvad-vad.ts';
import { mediaStats } from './media-stats.ts';
import { QuietGate, quietWindow } from './silero-gate.ts';
import { SILERO_CONTEXT, SILERO_WINDOW, SileroModel, type SileroJob, type SileroModelOptions } from './silero-model.ts';
import type { VadDecision, VadFactory, VoiceActivityDetector } from './vad.ts';

export interface SileroVadOptions extends SileroModelOptions {
  /** Speech probability at or above which a window starts speech (Silero's usual 0.5). */
  threshold?: number;
  /** Undecided audio a detector holds before its fallback decides it (ms); see SileroDetector. */
  maxBacklogMs?: number;
  /** The fallback's fvad mode, 0–3. */
  fallbackAggressiveness?: number;
  /**
   * Skip the network on quiet windows after a quiet stretch (silero-gate.ts): a third less of its
   * CPU on the capacity bench's stream, but the first sound after a long quiet is judged from an
   * older state, so decisions there differ (bench silero-gate). Off by default (SILERO_QUIET_GATE).
   */
  quietGate?: boolean;
}

/** Below threshold − this, speech ends; in between, the previous state holds (hysteresis). */
const HYSTERESIS = 0.15;
/** Ten windows: a healthy thread answers a window within one or two batches (a few ms each). */
const MAX_BACKLOG_MS = 320;

/** What a detector needs of the model: jobs in, each answered once (SileroModel, or a stalled one in tests). */
export type SileroRunner = Pick<SileroModel, 'submit'>;

export type SileroFactory = VadFactory & { model: SileroModel; readonly fallbackFrames: number; readonly quietWindows: number };

export async function createSileroFactory(options: SileroVadOptions = {}): Promise<SileroFactory> {
  const [model, fvad] = await Promise.all([SileroModel.load(options), loadFvad()]);
  const detectors = sileroDetectors(model, () => new FvadClassifier(fvad, options.fallbackAggressiveness ?? 3), options);
  return {
    provider: 'silero',
    model,
    create: detectors.create,
    get fallbackFrames() {
      return detectors.fallbackFrames;
    },
    get quietWindows() {
      return detectors.quietWindows;
    },
  };
}

/**
 * Detectors over any runner, with `fallbackFrames` counting the frames the fallback decided and
 * `quietWindows` the windows the quiet gate decided without the network (all detectors).
 */
export function sileroDetectors(
  model: SileroRunner,
  fallback: () => FvadClassifier,
  options: SileroVadOptions = {},
): { create: VadFactory['create']; fallbackFrames: number; quietWindows: number } {
  const threshold = options.threshold ?? 0.5;
  const maxBacklog = Math.round(((options.maxBacklogMs ?? MAX_BACKLOG_MS) * 16000) / 1000);
  const gate = options.quietGate ?? false;
  const counts = {
    fallbackFrames: 0,
    quietWindows: 0,
    create: (onDecision: VadDecision) =>
      new SileroDetector(model, { threshold, maxBacklog, gate }, fallback, onDecision, {
        fallback: () => (counts.fallbackFrames += 1),
        quiet: () => (counts.quietWindows += 1),
      }),
  };
  return counts;
}

/**
 * One session's Silero detector. 20 ms frames are cut into the model's 32 ms windows; a frame
 * gets the decision of the window its middle sample falls in, the one that covers most of it. So
 * it waits 12.5 ms on average (at most one window, plus one batch), where the window of its last
 * sample (which may cover 4 ms of it) would make it wait 22.5 ms: every end of turn waits that
 * long for its last silent frame. The recurrent state chains window to window, so a session has at most one
 * window in flight; the next waits for its state, and a thread that falls behind real time (a
 * starved or stalled one) would let windows and frames pile up without end. So undecided audio
 * is capped: past `maxBacklog` samples, fvad decides every waiting frame at once, in order, the
 * queued windows are dropped, and Silero goes on from the next window (with the state it has, as
 * after a gap in the audio). The window in flight stays the only job this detector has queued.
 * With the quiet gate on, a window the gate skips is decided "no speech" in its turn, after the
 * answer for the window before it, without going to the model.
 */
class SileroDetector implements VoiceActivityDetector {
  /**
   * The window being filled, as the wire's integers: same-type copies are plain memory copies, so
   * the event loop does no per-sample work here. The model scales the batch to ±1 on its own
   * thread (silero-worker.mjs), with the same float32 values as scaling here would give.
   */
  private window: Int16Array = new Int16Array(SILERO_CONTEXT + SILERO_WINDOW);
  private fill = SILERO_CONTEXT;
  /** The recurrent state; the model updates it in place (at most one window is in flight). */
  private readonly state = new Float32Array(2 * 128);
  /** Full windows waiting for the one in flight, with the sample count at each one's end. */
  private readonly ready: Int16Array[] = [];
  private readonly readyEnds: number[] = [];
  /** Whether each ready window is quiet (silero-gate.ts), judged as it fills. */
  private readonly readyQuiet: boolean[] = [];
  private readonly gate = new QuietGate();
  /**
   * Windows the model is done with, reused instead of one new array per 32 ms: two, since one is
   * usually in flight while the next fills. More would keep a past backlog's windows for life.
   */
  private readonly spare: Int16Array[] = [];
  /** The one job this detector can have in flight, reused window after window. */
  private readonly job: SileroJob & { end: number };
  private inFlight = false;
  /** Undecided frames and the index of each one's middle sample (two arrays: no object per frame). */
  private readonly frames: Int16Array[] = [];
  private readonly frameMids: number[] = [];
  private samplesIn = 0;
  /** Samples decided so far, by Silero or by the fallback: frames whose middle comes before it go out. */
  private decided = 0;
  private speaking = false;
  private fallback: FvadClassifier | undefined;
  private freed = false;

  constructor(
    private readonly model: SileroRunner,
    private readonly settings: { threshold: number; maxBacklog: number; gate: boolean },
    private readonly makeFallback: () => FvadClassifier,
    private readonly onDecision: VadDecision,
    private readonly count: { fallback(): void; quiet(): void },
  ) {
    this.job = {
      input: this.window,
      state: this.state,
      end: 0,
      done: (p) => {
        this.recycle(this.job.input);
        this.onWindow(p, this.job.end);
      },
    };
  }

  get pending(): number {
    return this.frames.length;
  }

  push(frame: Int16Array): void {
    if (this.freed) return;
    const start = this.samplesIn;
    this.samplesIn += frame.length;
    this.frames.push(frame);
    this.frameMids.push(start + (frame.length >> 1));
    for (let i = 0; i < frame.length; ) {
      const window = this.window;
      const run = Math.min(frame.length - i, window.length - this.fill);
      window.set(run === frame.length ? frame : frame.subarray(i, i + run), this.fill);
      i += run;
      this.fill += run;
      if (this.fill === window.length) {
        this.ready.push(window);
        this.readyEnds.push(start + i);
        this.readyQuiet.push(this.settings.gate && quietWindow(window));
        const next = this.spare.pop() ?? new Int16Array(window.length);
        // The new window opens with the last SILERO_CONTEXT samples.
        next.set(window.subarray(window.length - SILERO_CONTEXT));
        this.window = next;
        this.fill = SILERO_CONTEXT;
      }
    }
    if (this.samplesIn - this.decided > this.settings.maxBacklog) this.shed();
    this.submitNext();
  }

  free(): void {
    this.freed = true;
    this.frames.length = 0;
    this.frameMids.length = 0;
    this.ready.length = 0;
    this.readyEnds.length = 0;
    this.readyQuiet.length = 0;
    this.fallback?.free();
  }

  /** The model lags: fvad decides the backlog now; the window in flight comes back to an answered past. */
  private shed(): void {
    this.fallback ??= this.makeFallback();
    this.ready.length = 0;
    this.readyEnds.length = 0;
    this.readyQuiet.length = 0;
    this.gate.restart();
    this.decided = this.samplesIn;
    mediaStats().vadFallback(this.frames.length);
    while (this.frames.length > 0 && !this.freed) {
      const frame = this.frames.shift()!;
      this.frameMids.shift();
      this.count.fallback();
      this.onDecision(frame, this.fallback.speech(frame));
    }
  }

  /**
   * The next ready window goes to the model, unless the quiet gate decides it (and the ones after
   * it) here; either way in order, after the answer for the window before.
   */
  private submitNext(): void {
    while (!this.inFlight && !this.freed && this.ready.length > 0) {
      const input = this.ready.shift()!;
      const end = this.readyEnds.shift()!;
      if (this.gate.skips(this.readyQuiet.shift()!, this.speaking)) {
        this.count.quiet();
        this.recycle(input);
        this.settle(end);
        continue;
      }
      this.inFlight = true;
      this.job.input = input;
      this.job.end = end;
      this.model.submit(this.job);
    }
  }

  private recycle(window: Int16Array): void {
    if (this.spare.length < 2) this.spare.push(window);
  }

  private onWindow(probability: number, end: number): void {
    this.inFlight = false;
    if (this.freed) return;
    if (probability >= this.settings.threshold) this.speaking = true;
    else if (probability < this.settings.threshold - HYSTERESIS) this.speaking = false;
    this.settle(end);
    this.submitNext();
  }

  /** Frames whose middle sample comes before `end` are decided with the current speaking state. */
  private settle(end: number): void {
    this.decided = Math.max(this.decided, end);
    while (this.frames.length > 0 && this.frameMids[0]! < this.decided && !this.freed) {
      this.frameMids.shift();
      this.onDecision(this.frames.shift()!, this.speaking);
    }
  }
}

import { FvadClassifier, loadFvad } from './fvad-vad.ts';
import { mediaStats } from './media-stats.ts';
import { SILERO_CONTEXT, SILERO_WINDOW, SileroModel, type SileroJob, type SileroModelOptions } from './silero-model.ts';
import type { VadDecision, VadFactory, VoiceActivityDetector } from './vad.ts';

export interface SileroVadOptions extends SileroModelOptions {
  /** Speech probability at or above which a window starts speech (Silero's usual 0.5). */
  threshold?: number;
  /** Undecided audio a detector holds before its fallback decides it (ms); see SileroDetector. */
  maxBacklogMs?: number;
  /** The fallback's fvad mode, 0–3. */
  fallbackAggressiveness?: number;
}

/** Below threshold − this, speech ends; in between, the previous state holds (hysteresis). */
const HYSTERESIS = 0.15;
/** Ten windows: a healthy thread answers a window within one or two batches (a few ms each). */
const MAX_BACKLOG_MS = 320;

/** What a detector needs of the model: jobs in, each answered once (SileroModel, or a stalled one in tests). */
export type SileroRunner = Pick<SileroModel, 'submit'>;

export type SileroFactory = VadFactory & { model: SileroModel; readonly fallbackFrames: number };

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
  };
}

/** Detectors over any runner, with `fallbackFrames` counting the frames the fallback decided (all detectors). */
export function sileroDetectors(model: SileroRunner, fallback: () => FvadClassifier, options: SileroVadOptions = {}): { create: VadFactory['create']; fallbackFrames: number } {
  const threshold = options.threshold ?? 0.5;
  const maxBacklog = Math.round(((options.maxBacklogMs ?? MAX_BACKLOG_MS) * 16000) / 1000);
  const counts = {
    fallbackFrames: 0,
    create: (onDecision: VadDecision) =>
      new SileroDetector(model, threshold, maxBacklog, fallback, onDecision, () => {
        counts.fallbackFrames += 1;
      }),
  };
  return counts;
}

/**
 * One session's Silero detector. 20 ms frames are cut into the model's 32 ms windows; a frame
 * gets the decision of the window its last sample falls in, so it waits at most one window (plus
 * one batch) for it. The recurrent state chains window to window, so a session has at most one
 * window in flight; the next waits for its state, and a thread that falls behind real time (a
 * starved or stalled one) would let windows and frames pile up without end. So undecided audio
 * is capped: past `maxBacklog` samples, fvad decides every waiting frame at once, in order, the
 * queued windows are dropped, and Silero goes on from the next window (with the state it has, as
 * after a gap in the audio). The window in flight stays the only job this detector has queued.
 */
class SileroDetector implements VoiceActivityDetector {
  private window = new Float32Array(SILERO_CONTEXT + SILERO_WINDOW);
  private fill = SILERO_CONTEXT;
  /** The recurrent state; the model updates it in place (at most one window is in flight). */
  private readonly state = new Float32Array(2 * 128);
  /** Full windows waiting for the one in flight, with the sample count at each one's end. */
  private readonly ready: Array<{ input: Float32Array<ArrayBuffer>; end: number }> = [];
  /**
   * Windows the model is done with, reused instead of one new array per 32 ms: two, since one is
   * usually in flight while the next fills. More would keep a past backlog's windows for life.
   */
  private readonly spare: Array<Float32Array<ArrayBuffer>> = [];
  private inFlight = false;
  private readonly frames: Array<{ frame: Int16Array; end: number }> = [];
  private samplesIn = 0;
  /** Samples decided so far, by Silero or by the fallback: frames ending at or before it go out. */
  private decided = 0;
  private speaking = false;
  private fallback: FvadClassifier | undefined;
  private freed = false;

  constructor(
    private readonly model: SileroRunner,
    private readonly threshold: number,
    private readonly maxBacklog: number,
    private readonly makeFallback: () => FvadClassifier,
    private readonly onDecision: VadDecision,
    private readonly onFallback: () => void,
  ) {}

  get pending(): number {
    return this.frames.length;
  }

  push(frame: Int16Array): void {
    if (this.freed) return;
    const start = this.samplesIn;
    this.samplesIn += frame.length;
    this.frames.push({ frame, end: this.samplesIn });
    // Runs of samples in locals, one window at a time: this loop sees every uplink sample of
    // every session, and property reads per sample made it the hottest function at 300 sessions.
    for (let i = 0; i < frame.length; ) {
      const window = this.window;
      const run = Math.min(frame.length - i, window.length - this.fill);
      for (let k = 0, at = this.fill; k < run; k += 1, at += 1) window[at] = frame[i + k]! * (1 / 32768);
      i += run;
      this.fill += run;
      if (this.fill === window.length) {
        this.ready.push({ input: window, end: start + i });
        const next = this.spare.pop() ?? new Float32Array(window.length);
        // The new window opens with the last SILERO_CONTEXT samples (a loop: no view per window).
        for (let k = 0, from = window.length - SILERO_CONTEXT; k < SILERO_CONTEXT; k += 1) next[k] = window[from + k]!;
        this.window = next;
        this.fill = SILERO_CONTEXT;
      }
    }
    if (this.samplesIn - this.decided > this.maxBacklog) this.shed();
    this.submitNext();
  }

  free(): void {
    this.freed = true;
    this.frames.length = 0;
    this.ready.length = 0;
    this.fallback?.free();
  }

  /** The model lags: fvad decides the backlog now; the window in flight comes back to an answered past. */
  private shed(): void {
    this.fallback ??= this.makeFallback();
    this.ready.length = 0;
    this.decided = this.samplesIn;
    mediaStats().vadFallback(this.frames.length);
    while (this.frames.length > 0 && !this.freed) {
      const { frame } = this.frames.shift()!;
      this.onFallback();
      this.onDecision(frame, this.fallback.speech(frame));
    }
  }

  private submitNext(): void {
    if (this.inFlight || this.freed || this.ready.length === 0) return;
    this.inFlight = true;
    const { input, end } = this.ready.shift()!;
    const job: SileroJob = {
      input,
      state: this.state,
      done: (p) => {
        if (this.spare.length < 2) this.spare.push(input);
        this.onWindow(p, end);
      },
    };
    this.model.submit(job);
  }

  private onWindow(probability: number, end: number): void {
    this.inFlight = false;
    if (this.freed) return;
    if (probability >= this.threshold) this.speaking = true;
    else if (probability < this.threshold - HYSTERESIS) this.speaking = false;
    this.decided = Math.max(this.decided, end);
    while (this.frames.length > 0 && this.frames[0]!.end <= this.decided && !this.freed) {
      this.onDecision(this.frames.shift()!.frame, this.speaking);
    }
    this.submitNext();
  }
}

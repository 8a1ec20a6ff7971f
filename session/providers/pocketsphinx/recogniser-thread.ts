import { Worker } from 'node:worker_threads';
import { guardFlags, release } from '../../../media/native-thread-guard.ts';
import { SpeechProviderError } from '../tts.ts';
import type { RecogniserCommand, RecogniserEvent } from './protocol.ts';

const ENTRY = new URL('./recogniser-worker.mjs', import.meta.url);

/** Commands answered with a number, or nothing (the recogniser has no word yet, or the utterance ended). */
type NumberQuery = 'posterior' | 'sentence_end';

interface Pending {
  resolve(text: string): void;
  reject(error: Error): void;
}

/**
 * One recogniser thread (recogniser-worker.mjs) seen from the main thread: commands out, the
 * transcripts it owes back by utterance id. A thread that dies fails what it owed (asr_error).
 */
export class RecogniserThread {
  private readonly worker: Worker;
  private readonly finals = new Map<number, Pending>();
  private readonly partials = new Map<number, Pending[]>();
  private readonly numbers: Record<NumberQuery, Map<number, Array<(value: number | undefined) => void>>> = { posterior: new Map(), sentence_end: new Map() };
  /** The utterance this thread decodes now. */
  utterance: number | undefined;
  idleSince = Date.now();
  dead = false;
  readonly ready: Promise<void>;
  /** [busy, stopping] (media/native-thread-guard.ts): the process's exit waits out a call into the library. */
  private readonly flags = guardFlags();

  /** `searchSettings`: pocketsphinx pairs replacing the decoder's SEARCH_SETTINGS (benchmarks compare settings). */
  constructor(
    private readonly onDead: (thread: RecogniserThread) => void,
    searchSettings?: readonly string[],
  ) {
    this.worker = new Worker(ENTRY, { execArgv: [], stdout: false, stderr: false, workerData: { flags: this.flags, searchSettings } });
    // Sessions hold the process open, not an idle recogniser.
    this.worker.unref();
    let markReady!: () => void;
    this.ready = new Promise((resolve) => (markReady = resolve));
    this.worker.on('message', (event: RecogniserEvent) => {
      if (event.t === 'ready') return markReady();
      if (event.t === 'partial') return this.partials.get(event.id)?.shift()?.resolve(event.text);
      if (event.t === 'posterior') return this.numbers.posterior.get(event.id)?.shift()?.(event.posterior);
      if (event.t === 'sentence_end') return this.numbers.sentence_end.get(event.id)?.shift()?.(event.probability);
      this.settle(event.id, event.t === 'final' ? event.text : new Error(event.error));
    });
    this.worker.on('error', () => {});
    this.worker.on('exit', () => {
      release(this.flags);
      this.dead = true;
      markReady();
      for (const id of [...this.finals.keys(), ...this.partials.keys(), ...this.numbers.posterior.keys(), ...this.numbers.sentence_end.keys()]) this.settle(id, new Error('the recogniser stopped'));
      this.onDead(this);
    });
  }

  send(command: RecogniserCommand, transfer: ArrayBuffer[] = []): void {
    if (!this.dead) this.worker.postMessage(command, transfer);
  }

  finish(id: number): Promise<string> {
    if (this.dead) return Promise.reject(failure('the recogniser stopped'));
    const result = new Promise<string>((resolve, reject) => this.finals.set(id, { resolve, reject }));
    this.send({ t: 'finish', id });
    return result;
  }

  partial(id: number): Promise<string> {
    if (this.dead) return Promise.resolve('');
    return new Promise<string>((resolve, reject) => {
      const waiting = this.partials.get(id) ?? [];
      waiting.push({ resolve, reject });
      this.partials.set(id, waiting);
      this.send({ t: 'partial', id });
    });
  }

  /** The posterior of the utterance's last word so far (undefined before a word, or once it ended). */
  posterior(id: number): Promise<number | undefined> {
    return this.ask('posterior', id);
  }

  /** How likely the sentence ends after the utterance's words so far (undefined before a word, or once it ended). */
  sentenceEnd(id: number): Promise<number | undefined> {
    return this.ask('sentence_end', id);
  }

  private ask(query: NumberQuery, id: number): Promise<number | undefined> {
    if (this.dead) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiting = this.numbers[query].get(id) ?? [];
      waiting.push(resolve);
      this.numbers[query].set(id, waiting);
      this.send({ t: query, id });
    });
  }

  /**
   * Asks the thread to exit once the commands before this are done, and waits for it. Never a
   * terminate: a thread still loading its model (over a second on a starved machine) or inside a
   * decode would be torn down inside a native call, which aborts the process; and a thread that
   * has returned from the library always reaches the close command.
   */
  async close(): Promise<void> {
    if (this.dead) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    // Whoever waits for the close holds the process open until the thread is gone.
    this.worker.ref();
    this.send({ t: 'close', id: 0 });
    await exited;
  }

  private settle(id: number, outcome: string | Error): void {
    const pending = this.finals.get(id);
    const waiting = this.partials.get(id) ?? [];
    this.finals.delete(id);
    this.partials.delete(id);
    for (const answers of Object.values(this.numbers)) {
      for (const resolve of answers.get(id) ?? []) resolve(undefined);
      answers.delete(id);
    }
    if (typeof outcome === 'string') {
      pending?.resolve(outcome);
      for (const p of waiting) p.resolve('');
    } else {
      pending?.reject(failure(`pocketsphinx failed: ${outcome.message}`));
      for (const p of waiting) p.resolve('');
    }
  }
}

function failure(message: string): SpeechProviderError {
  return new SpeechProviderError(message, true, undefined, 'speech recognition failed');
}

import { existsSync } from 'node:fs';
import { SpeechUnavailableError, type SpeechToText, type TranscriptionStream } from './asr.ts';
import koffi from 'koffi';
import { RecogniserThread } from './pocketsphinx/recogniser-thread.ts';

const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
/**
 * Audio goes to a recogniser in slices of this many samples (128 ms), not frame by frame: the
 * block pocketsphinx_continuous reads, so its voice detection segments at the same points.
 */
const SLICE_SAMPLES = 2048;
/** Recognisers beyond the warm ones are let go after this long idle. */
const IDLE_FREE_MS = 60_000;

/**
 * Offline recognition with Debian's pocketsphinx, warm: recogniser threads keep a decoder loaded
 * (pocketsphinx/recogniser-worker.mjs) and decode each utterance as it is spoken, utterance after
 * utterance, so the end of a turn waits only for the last frames, never for a model load (it
 * used to start one process per utterance: ~0.4 s of CPU each). An utterance takes an idle
 * recogniser; when all are busy a new one starts (its audio waits in the queue meanwhile) and
 * stays while it is needed. Transcripts are matched by utterance id, never to the wrong turn.
 */
export class PocketsphinxSpeechToText implements SpeechToText {
  readonly name = 'pocketsphinx';
  readonly partials = true;
  private readonly threads: RecogniserThread[] = [];
  private nextId = 1;
  private closed = false;
  private readonly reaper: NodeJS.Timeout;

  /**
   * `warm`: recognisers loaded at start and always kept (~90 MB each). `searchSettings`: pocketsphinx
   * pairs in place of the server's SEARCH_SETTINGS (pocketsphinx/decoder.mjs), for benchmarks that
   * replay end of turn on another search; the server always runs its own.
   */
  constructor(
    private readonly warm = 2,
    private readonly searchSettings?: readonly string[],
  ) {
    for (let i = 0; i < warm; i += 1) this.spawn();
    this.reaper = setInterval(() => this.reap(), IDLE_FREE_MS / 4).unref();
  }

  /** Throws SpeechUnavailableError naming the fix when pocketsphinx is not installed. */
  static check(): void {
    try {
      if (!existsSync(MODEL_DIR)) throw new Error(`no model at ${MODEL_DIR}`);
      // What the recogniser threads load (pocketsphinx/decoder.mjs).
      koffi.load('libpocketsphinx.so.3');
      koffi.load('libsphinxbase.so.3');
    } catch (error) {
      throw new SpeechUnavailableError(
        `offline speech recognition needs Debian packages pocketsphinx and pocketsphinx-en-us (apt-get install pocketsphinx pocketsphinx-en-us), or ASR_PROVIDER=openai (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }

  /** Resolves once the warm recognisers have loaded their models. */
  async whenReady(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.ready));
  }

  open(): TranscriptionStream & { partial(): Promise<string>; lastWordPosterior(): Promise<number | undefined>; sentenceEndProbability(): Promise<number | undefined> } {
    const id = this.nextId++;
    const thread = this.threads.find((t) => t.utterance === undefined && !t.dead) ?? this.spawn();
    thread.utterance = id;
    thread.send({ t: 'open', id });
    let buffer = new Int16Array(SLICE_SAMPLES);
    let buffered = 0;
    let ended = false;
    let result: Promise<string> | undefined;
    const flush = (): void => {
      if (buffered === 0) return;
      const pcm = buffered === buffer.length ? buffer : buffer.slice(0, buffered);
      thread.send({ t: 'audio', id, pcm }, [pcm.buffer as ArrayBuffer]);
      buffer = new Int16Array(SLICE_SAMPLES);
      buffered = 0;
    };
    const done = (): void => {
      ended = true;
      if (thread.utterance === id) {
        thread.utterance = undefined;
        thread.idleSince = Date.now();
      }
    };
    return {
      write: (samples) => {
        for (let offset = 0; !ended && offset < samples.length; ) {
          const n = Math.min(samples.length - offset, buffer.length - buffered);
          buffer.set(samples.subarray(offset, offset + n), buffered);
          buffered += n;
          offset += n;
          if (buffered === buffer.length) flush();
        }
      },
      finish: () => {
        if (!result) {
          flush();
          // The thread decodes commands in order: the next utterance may be queued behind this finish.
          result = thread.finish(id);
          done();
        }
        return result;
      },
      abort: () => {
        if (ended) return;
        thread.send({ t: 'abort', id });
        done();
      },
      partial: () => {
        if (ended) return Promise.resolve('');
        flush();
        return thread.partial(id);
      },
      lastWordPosterior: () => {
        if (ended) return Promise.resolve(undefined);
        flush();
        return thread.posterior(id);
      },
      sentenceEndProbability: () => {
        if (ended) return Promise.resolve(undefined);
        flush();
        return thread.sentenceEnd(id);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.reaper);
    await Promise.all(this.threads.splice(0).map((t) => t.close()));
  }

  private spawn(): RecogniserThread {
    const thread = new RecogniserThread((dead) => {
      const i = this.threads.indexOf(dead);
      if (i >= 0) this.threads.splice(i, 1);
      // Keep the warm count: a crashed recogniser is replaced.
      if (!this.closed && this.threads.length < this.warm) this.spawn();
    }, this.searchSettings);
    this.threads.push(thread);
    return thread;
  }

  private reap(): void {
    const now = Date.now();
    for (const t of [...this.threads]) {
      if (this.threads.length <= this.warm) return;
      if (t.utterance === undefined && now - t.idleSince > IDLE_FREE_MS) {
        this.threads.splice(this.threads.indexOf(t), 1);
        void t.close();
      }
    }
  }
}

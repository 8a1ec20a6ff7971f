import { Worker } from 'node:worker_threads';
import { parseWav } from '../../media/pcm.ts';
import { SpeechProviderError, type SpeechChunk, type TextToSpeech } from './tts.ts';
import { catalogOf, FLITE_VOICES, type VoiceCatalog } from './voices.ts';

interface Pending {
  resolve(chunk: SpeechChunk): void;
  reject(error: Error): void;
}

/**
 * The offline default TTS: flite (WASI) in a worker thread, one request at a time per worker.
 * Requests queue in the worker; a reply synthesises sentence by sentence, so the queue holds
 * short jobs and a long reply never starves other sessions for long.
 */
export class FliteTextToSpeech implements TextToSpeech {
  readonly name = 'flite';
  readonly voices: VoiceCatalog = catalogOf(FLITE_VOICES);
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private turn = 0;

  constructor(workerCount = 1) {
    for (let i = 0; i < workerCount; i += 1) this.workers.push(this.spawn());
  }

  async *synthesize(text: string, voice: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    const clean = text.replace(/\s+/g, ' ').trim();
    if (!clean || signal.aborted) return;
    if (!this.voices.find(voice)) throw new SpeechProviderError(`unknown voice ${voice}`, false);
    const id = this.nextId++;
    const worker = this.workers[this.turn++ % this.workers.length]!;
    const chunk = await new Promise<SpeechChunk>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, text: clean, voice });
    });
    if (signal.aborted) return;
    yield chunk;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private spawn(): Worker {
    const worker = new Worker(new URL('./flite-worker.mjs', import.meta.url));
    worker.unref();
    worker.on('message', (message: { id: number; wav?: Uint8Array; error?: string }) => {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.error || !message.wav) return pending.reject(new SpeechProviderError(`flite failed: ${message.error ?? 'no audio'}`));
      try {
        const { samples, sampleRate } = parseWav(new Uint8Array(message.wav));
        pending.resolve({ samples, sampleRate });
      } catch (error) {
        pending.reject(new SpeechProviderError(`flite produced bad audio: ${String(error)}`));
      }
    });
    worker.on('error', (error) => {
      for (const [id, p] of this.pending) {
        p.reject(new SpeechProviderError(`flite worker crashed: ${error.message}`));
        this.pending.delete(id);
      }
      const index = this.workers.indexOf(worker);
      if (index >= 0) this.workers[index] = this.spawn();
    });
    return worker;
  }
}

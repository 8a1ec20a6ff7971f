import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseWav } from '../../media/pcm.ts';
import { SpeechProviderError, type SpeechChunk, type TextToSpeech } from './tts.ts';
import { catalogOf, FLITE_VOICES, type VoiceCatalog } from './voices.ts';

/** The helper's entry point (its tests fork it directly). */
export const FLITE_HELPER = fileURLToPath(new URL('./flite-process.mjs', import.meta.url));

interface Request {
  id: number;
  text: string;
  voice: string;
  attempts: number;
  /** Kills a helper that has not answered in time (its requests then retry once elsewhere). */
  timer?: NodeJS.Timeout;
  resolve(chunk: SpeechChunk): void;
  reject(error: Error): void;
}

/**
 * The offline default TTS: flite (WASI) in helper processes (see flite-process.mjs for why not
 * worker threads). A reply synthesises sentence by sentence, so each request is short; a helper
 * that dies takes no request with it: its requests are retried once on a fresh helper. A helper
 * that stops answering is killed after `timeoutMs` (TTS_TIMEOUT_MS), so a stuck sentence becomes
 * the same retry, then tts_error, never a turn that hangs.
 */
export class FliteTextToSpeech implements TextToSpeech {
  readonly name = 'flite';
  readonly voices: VoiceCatalog = catalogOf(FLITE_VOICES);
  private readonly helpers: Helper[] = [];
  private nextId = 1;
  private turn = 0;
  private closed = false;

  constructor(
    helperCount = 1,
    private readonly timeoutMs = 10_000,
  ) {
    for (let i = 0; i < helperCount; i += 1) this.helpers.push(this.spawn());
  }

  async *synthesize(text: string, voice: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    const clean = text.replace(/\s+/g, ' ').trim();
    if (!clean || signal.aborted) return;
    if (!this.voices.find(voice)) throw new SpeechProviderError(`unknown voice ${voice}`, false);
    const chunk = await new Promise<SpeechChunk>((resolve, reject) => {
      this.dispatch({ id: this.nextId++, text: clean, voice, attempts: 0, resolve, reject });
    });
    if (signal.aborted) return;
    yield chunk;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const helper of this.helpers) helper.child.kill();
  }

  private dispatch(request: Request): void {
    if (this.closed) return request.reject(new SpeechProviderError('speech synthesis is shutting down', false));
    const index = this.turn++ % this.helpers.length;
    let helper = this.helpers[index]!;
    if (!helper.alive) {
      helper = this.spawn();
      this.helpers[index] = helper;
    }
    helper.pending.set(request.id, request);
    helper.hold(true);
    helper.child.send({ id: request.id, text: request.text, voice: request.voice });
    request.timer = setTimeout(() => {
      if (helper.pending.has(request.id)) helper.child.kill('SIGKILL');
    }, this.timeoutMs);
  }

  private spawn(): Helper {
    const helper = new Helper(fork(FLITE_HELPER, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'] }));
    helper.child.on('message', (message: { id: number; wav?: Uint8Array; error?: string }) => {
      const request = helper.pending.get(message.id);
      if (!request) return;
      clearTimeout(request.timer);
      helper.pending.delete(message.id);
      if (helper.pending.size === 0) helper.hold(false);
      if (message.error || !message.wav) return request.reject(new SpeechProviderError(`flite failed: ${message.error ?? 'no audio'}`));
      try {
        request.resolve(parseWav(new Uint8Array(message.wav)));
      } catch (error) {
        request.reject(new SpeechProviderError(`flite produced bad audio: ${String(error)}`));
      }
    });
    helper.child.on('exit', () => {
      helper.alive = false;
      const orphans = [...helper.pending.values()];
      helper.pending.clear();
      for (const request of orphans) {
        clearTimeout(request.timer);
        request.attempts += 1;
        if (request.attempts > 1) request.reject(new SpeechProviderError('flite crashed or stalled twice on this sentence', true, undefined, 'speech synthesis failed'));
        else this.dispatch(request);
      }
    });
    helper.hold(false);
    return helper;
  }
}

class Helper {
  alive = true;
  readonly pending = new Map<number, Request>();
  constructor(readonly child: ChildProcess) {}

  /** An idle helper must not keep the process alive; a busy one must, until it answers. */
  hold(busy: boolean): void {
    if (busy) {
      this.child.ref();
      this.child.channel?.ref();
    } else {
      this.child.unref();
      this.child.channel?.unref();
    }
  }
}

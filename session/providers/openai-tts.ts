/**
 * TextToSpeech adapter for any OpenAI-compatible `/audio/speech` endpoint (OpenAI tts-1 /
 * gpt-4o-mini-tts, Kokoro-FastAPI, openedai-speech, LocalAI...). It asks for `response_format:
 * 'pcm'` — raw 24 kHz mono PCM16 little-endian, no header — and yields the samples as the
 * response body streams in, so the first audio leaves before the sentence is fully synthesised.
 *
 * Abort contract (as for the LLM adapter): when `signal` aborts, iteration stops reading and
 * ends silently; it never throws an AbortError.
 */
import { Pcm16Reader } from '../../media/pcm.ts';
import type { VoiceEntry } from '../protocol/server.ts';
import { httpError, SpeechHttpError } from './openai-asr.ts';
import { abortable, describeError, endpoint, postJson } from './openai-http.ts';
import { SpeechProviderError, type SpeechChunk, type TextToSpeech } from './tts.ts';
import { catalogOf, type VoiceCatalog } from './voices.ts';

export interface OpenAiTextToSpeechOptions {
  /** e.g. `https://api.openai.com/v1`; a trailing slash is tolerated. */
  baseUrl: string;
  apiKey?: string;
  /** e.g. `tts-1`. */
  model: string;
  /** The voice keys the endpoint accepts (TTS_VOICES); they make up `voices`. */
  voices: readonly string[];
  /** Bounds the wait for response headers only, so long sentences are not cut off. Default 30000. */
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

/** OpenAI's `pcm` response format. */
export const OPENAI_PCM_SAMPLE_RATE = 24000;
const DEFAULT_TIMEOUT_MS = 30_000;

export class OpenAiTextToSpeech implements TextToSpeech {
  readonly name: string;
  readonly voices: VoiceCatalog;
  private readonly url: string;

  constructor(private readonly options: OpenAiTextToSpeechOptions) {
    this.name = `openai:${options.model}`;
    this.url = endpoint(options.baseUrl, 'audio/speech');
    this.voices = catalogOf(openAiVoiceEntries(options.voices));
  }

  async *synthesize(text: string, voice: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    if (!this.voices.find(voice)) throw new SpeechProviderError(`unknown voice ${voice}`, false);
    const input = text.replace(/\s+/g, ' ').trim();
    if (!input || signal.aborted) return;
    // One controller covers the caller's abort, the header timeout, and our own cleanup, so the
    // socket is released even when the consumer stops iterating early.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.post(input, voice, signal, controller);
      if (!response || signal.aborted) return;
      if (!response.ok) {
        const error = await httpError(response);
        if (signal.aborted) return;
        throw error;
      }
      if (!response.body) throw new SpeechHttpError(`${this.url} returned no body`, true, response.status);
      const reader = response.body.getReader();
      const pcm = new Pcm16Reader();
      for (;;) {
        if (signal.aborted) return;
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          // Racing the read against the signal keeps abort prompt even with a fetchImpl whose
          // body ignores the signal.
          chunk = await abortable(reader.read(), signal);
        } catch (error) {
          if (signal.aborted) return;
          throw new SpeechHttpError(`audio stream from ${this.url} broke: ${describeError(error)}`, true);
        }
        if (chunk.done) return;
        // An odd byte at a chunk's end is carried into the next chunk by the reader.
        const samples = pcm.read(chunk.value);
        if (samples.length > 0) yield { samples, sampleRate: OPENAI_PCM_SAMPLE_RATE };
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      controller.abort();
    }
  }

  /** Resolves undefined when the caller aborted before headers arrived. */
  private async post(input: string, voice: string, signal: AbortSignal, controller: AbortController): Promise<Response | undefined> {
    const outcome = await postJson({
      url: this.url,
      body: { model: this.options.model, input, voice, response_format: 'pcm' },
      apiKey: this.options.apiKey,
      timeoutMs: this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      controller,
      callerSignal: signal,
      fetchImpl: this.options.fetchImpl,
    });
    if (outcome.kind === 'response') return outcome.response;
    if (outcome.kind === 'aborted') return undefined;
    if (outcome.kind === 'timeout') throw new SpeechHttpError(`no response from ${this.url} within ${outcome.timeoutMs} ms`, true);
    throw new SpeechHttpError(`request to ${this.url} failed: ${describeError(outcome.error)}`, true);
  }
}

/** Catalogue entries for configured voice keys: `alloy` → `{voice: 'alloy', name: 'Alloy', ...}`. */
export function openAiVoiceEntries(keys: readonly string[]): VoiceEntry[] {
  const seen = new Set<string>();
  const entries: VoiceEntry[] = [];
  for (const raw of keys) {
    const voice = raw.trim();
    if (!voice || seen.has(voice)) continue;
    seen.add(voice);
    entries.push({ voice, name: voice.charAt(0).toUpperCase() + voice.slice(1), language: 'en', gender: 'neutral' });
  }
  return entries;
}

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
import { Upstream } from './http/upstream.ts';
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
  /** Bounds the wait for response headers. Default 10000. */
  timeoutMs?: number;
  /** Longest silence between two audio chunks once the answer started. Default 5000. */
  idleTimeoutMs?: number;
  /** Connections kept open to the endpoint. Default 256. */
  connections?: number;
}

/** OpenAI's `pcm` response format. */
export const OPENAI_PCM_SAMPLE_RATE = 24000;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_IDLE_TIMEOUT_MS = 5_000;

export class OpenAiTextToSpeech implements TextToSpeech {
  readonly name: string;
  readonly voices: VoiceCatalog;
  private readonly upstream: Upstream<SpeechProviderError>;

  constructor(private readonly options: OpenAiTextToSpeechOptions) {
    this.name = `openai:${options.model}`;
    this.voices = catalogOf(openAiVoiceEntries(options.voices));
    this.upstream = new Upstream('speech synthesis', SpeechProviderError, {
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      firstByteMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      idleMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    });
  }

  async *synthesize(text: string, voice: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    if (!this.voices.find(voice)) throw new SpeechProviderError(`unknown voice ${voice}`, false);
    const input = text.replace(/\s+/g, ' ').trim();
    if (!input) return;
    const body = await this.upstream.request({
      path: 'audio/speech',
      body: JSON.stringify({ model: this.options.model, input, voice, response_format: 'pcm' }),
      contentType: 'application/json',
      signal,
    });
    if (!body) return;
    const pcm = new Pcm16Reader();
    try {
      for await (const bytes of body as AsyncIterable<Buffer>) {
        if (signal.aborted) return;
        // An odd byte at a chunk's end is carried into the next chunk by the reader.
        const samples = pcm.read(bytes);
        if (samples.length > 0) yield { samples, sampleRate: OPENAI_PCM_SAMPLE_RATE };
      }
    } catch (error) {
      if (signal.aborted) return;
      throw this.upstream.bodyFailure(error);
    } finally {
      body.destroy();
    }
  }

  close(): Promise<void> {
    return this.upstream.close();
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

/**
 * SpeechToText adapter for any OpenAI-compatible `/audio/transcriptions` endpoint (OpenAI
 * whisper-1 / gpt-4o-transcribe, faster-whisper-server, LocalAI, whisper.cpp's server...).
 *
 * The endpoint is not streaming: a stream buffers the utterance's 16 kHz PCM while the user
 * speaks and uploads it as one WAV when the turn ends. abort() drops the audio and cancels the
 * upload if one is in flight; the pending finish() then resolves '' (no transcript), never throws.
 */
import type { SpeechToText, TranscriptionStream } from './asr.ts';
import { SpeechProviderError } from './tts.ts';
import { describeError, describeHttpError, endpoint, isRetryableStatus } from './openai-http.ts';

export interface OpenAiSpeechToTextOptions {
  /** e.g. `https://api.openai.com/v1`; a trailing slash is tolerated. */
  baseUrl: string;
  apiKey?: string;
  /** e.g. `whisper-1`. */
  model: string;
  /** Bounds the whole request (upload, wait, JSON answer). Default 30000. */
  timeoutMs?: number;
  /** ISO-639-1 hint such as `en`; omitted from the request when unset. */
  language?: string;
  fetchImpl?: typeof fetch;
}

/** A speech provider's HTTP failure: SpeechProviderError plus the status when there was one. */
export class SpeechHttpError extends SpeechProviderError {
  constructor(
    message: string,
    retryable: boolean,
    readonly status?: number,
  ) {
    super(message, retryable);
  }
}

const SAMPLE_RATE = 16000;
const DEFAULT_TIMEOUT_MS = 30_000;
/** OpenAI refuses files over 25 MB: about 13 minutes of 16 kHz PCM16. Later audio is dropped. */
const MAX_SAMPLES = Math.floor((25 * 1024 * 1024 - 44) / 2);

export class OpenAiSpeechToText implements SpeechToText {
  readonly name: string;
  private readonly url: string;

  constructor(private readonly options: OpenAiSpeechToTextOptions) {
    this.name = `openai:${options.model}`;
    this.url = endpoint(options.baseUrl, 'audio/transcriptions');
  }

  open(): TranscriptionStream {
    const chunks: Int16Array[] = [];
    let samples = 0;
    let ended = false;
    let aborted = false;
    let result: Promise<string> | undefined;
    const controller = new AbortController();
    return {
      write: (pcm) => {
        if (ended || pcm.length === 0 || samples >= MAX_SAMPLES) return;
        // Copy: callers may reuse their frame buffers.
        const take = pcm.length <= MAX_SAMPLES - samples ? pcm.slice() : pcm.slice(0, MAX_SAMPLES - samples);
        chunks.push(take);
        samples += take.length;
      },
      finish: () => {
        ended = true;
        if (!result) {
          const audio = concat(chunks, samples);
          chunks.length = 0;
          result = aborted || audio.length === 0 ? Promise.resolve('') : this.transcribe(audio, controller);
        }
        return result;
      },
      abort: () => {
        ended = true;
        aborted = true;
        chunks.length = 0;
        controller.abort();
      },
    };
  }

  private async transcribe(audio: Int16Array, controller: AbortController): Promise<string> {
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const cancelled = (): boolean => controller.signal.aborted && !timedOut;
    const form = new FormData();
    form.append('file', new Blob([encodeWav(audio, SAMPLE_RATE)], { type: 'audio/wav' }), 'audio.wav');
    form.append('model', this.options.model);
    form.append('response_format', 'json');
    if (this.options.language) form.append('language', this.options.language);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    try {
      // Resolve fetch at call time so tests (and polyfills) that swap globalThis.fetch still apply.
      const fetchImpl = this.options.fetchImpl ?? fetch;
      const response = await fetchImpl(this.url, { method: 'POST', headers, body: form, signal: controller.signal });
      if (!response.ok) throw await httpError(response);
      const body = (await response.json()) as { text?: unknown };
      if (typeof body?.text !== 'string') throw new SpeechHttpError(`${this.url} answered without a text field`, true, response.status);
      return body.text.trim();
    } catch (error) {
      if (cancelled()) return '';
      if (timedOut) throw new SpeechHttpError(`no transcription from ${this.url} within ${timeoutMs} ms`, true);
      if (error instanceof SpeechProviderError) throw error;
      if (error instanceof SyntaxError) throw new SpeechHttpError(`${this.url} answered with malformed JSON`, true);
      throw new SpeechHttpError(`request to ${this.url} failed: ${describeError(error)}`, true);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A canonical 44-byte-header RIFF/WAVE file: PCM16 little-endian, mono. */
export function encodeWav(samples: Int16Array, sampleRate: number): Uint8Array<ArrayBuffer> {
  const dataBytes = samples.length * 2;
  const out = new Uint8Array(new ArrayBuffer(44 + dataBytes));
  const view = new DataView(out.buffer);
  const ascii = (offset: number, text: string): void => {
    for (let i = 0; i < text.length; i += 1) out[offset + i] = text.charCodeAt(i);
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); // byte rate
  view.setUint16(32, 2, true); // block align
  view.setUint16(34, 16, true); // bits per sample
  ascii(36, 'data');
  view.setUint32(40, dataBytes, true);
  for (let i = 0; i < samples.length; i += 1) view.setInt16(44 + i * 2, samples[i]!, true);
  return out;
}

function concat(chunks: Int16Array[], total: number): Int16Array {
  const out = new Int16Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

export async function httpError(response: Response): Promise<SpeechHttpError> {
  return new SpeechHttpError(await describeHttpError(response), isRetryableStatus(response.status), response.status);
}

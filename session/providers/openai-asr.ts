/**
 * SpeechToText adapter for any OpenAI-compatible `/audio/transcriptions` endpoint (OpenAI
 * whisper-1 / gpt-4o-transcribe, faster-whisper-server, LocalAI, whisper.cpp's server...).
 *
 * The endpoint is not streaming: a stream buffers the utterance's 16 kHz PCM while the user
 * speaks and uploads it as one WAV when the turn ends. abort() drops the audio and cancels the
 * upload if one is in flight; the pending finish() then resolves '' (no transcript), never throws.
 */
import type { SpeechToText, TranscriptionStream } from './asr.ts';
import { randomUUID } from 'node:crypto';
import { SpeechProviderError } from './tts.ts';
import { Upstream } from './http/upstream.ts';

export interface OpenAiSpeechToTextOptions {
  /** e.g. `https://api.openai.com/v1`; a trailing slash is tolerated. */
  baseUrl: string;
  apiKey?: string;
  /** e.g. `whisper-1`. */
  model: string;
  /** Bounds the wait for the answer's headers (upload and transcription), and any gap in its body. Default 15000. */
  timeoutMs?: number;
  /** ISO-639-1 hint such as `en`; omitted from the request when unset. */
  language?: string;
  /** Connections kept open to the endpoint. Default 256. */
  connections?: number;
}

const SAMPLE_RATE = 16000;
const DEFAULT_TIMEOUT_MS = 15_000;
/** OpenAI refuses files over 25 MB: about 13 minutes of 16 kHz PCM16. Later audio is dropped. */
const MAX_SAMPLES = Math.floor((25 * 1024 * 1024 - 44) / 2);

export class OpenAiSpeechToText implements SpeechToText {
  readonly name: string;
  private readonly upstream: Upstream<SpeechProviderError>;

  constructor(private readonly options: OpenAiSpeechToTextOptions) {
    this.name = `openai:${options.model}`;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.upstream = new Upstream('speech recognition', SpeechProviderError, {
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      firstByteMs: timeoutMs,
      idleMs: timeoutMs,
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    });
  }

  close(): Promise<void> {
    return this.upstream.close();
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
    const fields: [string, string][] = [['model', this.options.model], ['response_format', 'json']];
    if (this.options.language) fields.push(['language', this.options.language]);
    const form = multipart(encodeWav(audio, SAMPLE_RATE), fields);
    const body = await this.upstream.request({ path: 'audio/transcriptions', body: form.body, contentType: form.contentType, accept: 'application/json', signal: controller.signal });
    if (!body) return '';
    let text: string;
    try {
      text = await body.text();
    } catch (error) {
      if (controller.signal.aborted) return '';
      throw this.upstream.bodyFailure(error);
    }
    let answer: { text?: unknown };
    try {
      answer = JSON.parse(text) as { text?: unknown };
    } catch {
      throw this.upstream.fail('malformed', `answer is not JSON: ${text}`);
    }
    if (typeof answer?.text !== 'string') throw this.upstream.fail('malformed', 'answer has no text field');
    return answer.text.trim();
  }
}

/** A multipart/form-data body with the WAV as its `file` part, built in one buffer. */
function multipart(wav: Uint8Array, fields: [string, string][]): { body: Buffer; contentType: string } {
  const boundary = `parley-${randomUUID()}`;
  const head = fields.map(([name, value]) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('');
  const fileHead = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="audio.wav"\r\ncontent-type: audio/wav\r\n\r\n`;
  const body = Buffer.concat([Buffer.from(head + fileHead), wav, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
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

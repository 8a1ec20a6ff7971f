import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  startFakeOpenAiSpeechServer,
  tone,
  toneReply,
  TONE_MS_PER_CHAR,
  type FakeOpenAiSpeechServer,
} from '../testing/fake-openai-speech-server.ts';
import { OpenAiTextToSpeech } from './openai-tts.ts';
import { SpeechProviderError, type SpeechChunk } from './tts.ts';

const VOICES = ['alloy', 'echo', 'fable', 'onyx', 'nova', 'shimmer'];

let fake: FakeOpenAiSpeechServer;
beforeAll(async () => {
  fake = await startFakeOpenAiSpeechServer();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  fake.speeches.length = 0;
  fake.scriptSpeech((request) => toneReply(request.input));
});

function tts(extra: Partial<ConstructorParameters<typeof OpenAiTextToSpeech>[0]> = {}): OpenAiTextToSpeech {
  return new OpenAiTextToSpeech({ baseUrl: fake.url, model: 'tts-1', voices: VOICES, ...extra });
}

interface Received {
  chunks: SpeechChunk[];
  /** performance.now() when each chunk was yielded. */
  at: number[];
  samples: Int16Array;
}

async function collect(iterable: AsyncIterable<SpeechChunk>): Promise<Received> {
  const chunks: SpeechChunk[] = [];
  const at: number[] = [];
  for await (const chunk of iterable) {
    chunks.push(chunk);
    at.push(performance.now());
  }
  const samples = new Int16Array(chunks.reduce((n, c) => n + c.samples.length, 0));
  let offset = 0;
  for (const c of chunks) {
    samples.set(c.samples, offset);
    offset += c.samples.length;
  }
  return { chunks, at, samples };
}

async function rejection(promise: Promise<unknown>): Promise<SpeechProviderError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SpeechProviderError);
    return error as SpeechProviderError;
  }
  throw new Error('expected a rejection');
}

describe('OpenAiTextToSpeech over HTTP', () => {
  it('posts the OpenAI speech request and streams 24 kHz chunks as they arrive', async () => {
    const text = 'Twelve times seven is eighty-four.';
    const got = await collect(tts({ apiKey: 'sk-tts' }).synthesize(`  ${text}\n`, 'nova', new AbortController().signal));

    expect(fake.speeches).toHaveLength(1);
    const req = fake.speeches[0]!;
    expect(req.body).toEqual({ model: 'tts-1', input: text, voice: 'nova', response_format: 'pcm' });
    expect(req.headers.authorization).toBe('Bearer sk-tts');
    expect(req.headers['content-type']).toBe('application/json');

    // The default fake reply: TONE_MS_PER_CHAR of 440 Hz per character, in ~100 ms chunks.
    const expected = tone(text.length * TONE_MS_PER_CHAR);
    expect(got.samples.length).toBe(expected.length);
    expect(Buffer.from(got.samples.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
    expect(got.chunks.every((c) => c.sampleRate === 24000)).toBe(true);
    expect(got.chunks.length).toBeGreaterThanOrEqual(3);
    // Streaming, not buffering: audio was yielded before the server had written its last byte.
    expect(req.finishedAt).toBeDefined();
    expect(got.at[0]!).toBeLessThan(req.finishedAt!);
    expect(got.at.filter((t) => t < req.finishedAt!).length).toBeGreaterThanOrEqual(2);
  });

  it('carries odd trailing bytes across chunks to exact samples', async () => {
    const pcm = new Int16Array(1001);
    for (let i = 0; i < pcm.length; i += 1) pcm[i] = ((i * 7919) % 65536) - 32768; // every byte pattern, signs mixed
    fake.scriptSpeech(() => ({ pcm, chunkBytes: [1, 3, 5, 7, 2, 1, 333], delayMs: 5 }));
    const got = await collect(tts().synthesize('odd', 'alloy', new AbortController().signal));
    expect(got.samples).toEqual(pcm);
    expect(got.chunks.length).toBeGreaterThan(3);
    expect(got.chunks.every((c) => c.samples.length > 0)).toBe(true);
  });

  it('stops promptly and quietly when aborted mid-stream', async () => {
    // 10 s of audio at a slow pace: 200 ms per 100 ms chunk.
    fake.scriptSpeech(() => ({ pcm: tone(10_000), chunkBytes: [4801, 4800], delayMs: 200 }));
    const controller = new AbortController();
    const chunks: SpeechChunk[] = [];
    let abortedAt = 0;
    for await (const chunk of tts().synthesize('a long sentence', 'echo', controller.signal)) {
      chunks.push(chunk);
      if (chunks.length === 1) {
        // Abort while the next read is pending, not between iterations.
        setTimeout(() => {
          abortedAt = performance.now();
          controller.abort();
        }, 50);
      }
    }
    const stoppedAfter = performance.now() - abortedAt;
    expect(abortedAt).toBeGreaterThan(0);
    expect(stoppedAfter).toBeLessThan(100);
    expect(chunks).toHaveLength(1);
    await fake.until(() => fake.speeches[0]!.aborted, 'the speech request to be cut');
    expect(fake.speeches[0]!.bytesSent).toBeLessThan(10_000 * 48);
  });

  it('a consumer that stops iterating releases the request', async () => {
    fake.scriptSpeech(() => ({ pcm: tone(10_000), chunkBytes: [4800], delayMs: 100 }));
    for await (const chunk of tts().synthesize('break early', 'echo', new AbortController().signal)) {
      expect(chunk.samples.length).toBeGreaterThan(0);
      break;
    }
    await fake.until(() => fake.speeches[0]!.aborted, 'the speech request to be cut');
  });

  it('an already-aborted signal or blank text makes no request', async () => {
    const aborted = new AbortController();
    aborted.abort();
    expect((await collect(tts().synthesize('hello', 'alloy', aborted.signal))).chunks).toHaveLength(0);
    expect((await collect(tts().synthesize(' \n ', 'alloy', new AbortController().signal))).chunks).toHaveLength(0);
    expect(fake.speeches).toHaveLength(0);
  });

  it('rejects an unknown voice without a request, not retryable', async () => {
    const error = await rejection(collect(tts().synthesize('hello', 'slt', new AbortController().signal)));
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('slt');
    expect(fake.speeches).toHaveLength(0);
  });

  it('HTTP errors carry the status and server message; 429 and 5xx are retryable, 400 is not', async () => {
    for (const [status, retryable] of [[429, true], [500, true], [400, false]] as const) {
      fake.scriptSpeech(() => ({ status, error: `speech failure ${status}` }));
      const error = await rejection(collect(tts().synthesize('hello', 'alloy', new AbortController().signal)));
      expect(error.status).toBe(status);
      expect(error.retryable).toBe(retryable);
      expect(error.message).toBe(`speech synthesis: http HTTP ${status}: speech failure ${status}`);
    }
  });

  it('an unreachable server is a retryable error', async () => {
    const error = await rejection(collect(tts({ baseUrl: 'http://127.0.0.1:1/v1/' }).synthesize('hello', 'alloy', new AbortController().signal)));
    expect(error.retryable).toBe(true);
    expect(error.publicDetail).toBe('speech synthesis could not be reached');
  });

  it('builds the voice catalogue from the configured keys', () => {
    const model = tts({ voices: ['alloy', ' nova ', '', 'alloy', 'ballad'] });
    expect(model.name).toBe('openai:tts-1');
    expect(model.voices.list()).toEqual([
      { voice: 'alloy', name: 'Alloy', language: 'en', gender: 'neutral' },
      { voice: 'nova', name: 'Nova', language: 'en', gender: 'neutral' },
      { voice: 'ballad', name: 'Ballad', language: 'en', gender: 'neutral' },
    ]);
    expect(model.voices.find('nova')?.name).toBe('Nova');
    expect(model.voices.find('echo')).toBeUndefined();
  });
});

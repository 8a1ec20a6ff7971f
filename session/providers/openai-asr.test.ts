import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiSpeechServer, type FakeOpenAiSpeechServer } from '../testing/fake-openai-speech-server.ts';
import { encodeWav, OpenAiSpeechToText } from './openai-asr.ts';
import { SpeechProviderError } from './tts.ts';

let fake: FakeOpenAiSpeechServer;
beforeAll(async () => {
  fake = await startFakeOpenAiSpeechServer();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  fake.transcriptions.length = 0;
  fake.scriptTranscription(() => 'hello');
});

/** A ramp, so any byte-order or offset mistake changes the samples. */
function ramp(n: number, start = -12000, step = 7): Int16Array {
  const out = new Int16Array(n);
  for (let i = 0; i < n; i += 1) out[i] = start + ((i * step) % 24000);
  return out;
}

function stt(extra: Partial<ConstructorParameters<typeof OpenAiSpeechToText>[0]> = {}): OpenAiSpeechToText {
  return new OpenAiSpeechToText({ baseUrl: fake.url, model: 'whisper-1', ...extra });
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

describe('OpenAiSpeechToText over HTTP', () => {
  it('uploads the utterance as a 16 kHz mono PCM16 WAV and returns the trimmed text', async () => {
    fake.scriptTranscription(() => '  what is twelve times seven \n');
    const samples = ramp(16000 * 1.5);
    const stream = stt({ apiKey: 'sk-test-123' }).open();
    // Written in VAD-sized frames, from one reused buffer: the adapter must copy.
    const frame = new Int16Array(320);
    for (let i = 0; i < samples.length; i += 320) {
      frame.set(samples.subarray(i, i + 320));
      stream.write(frame);
    }
    expect(await stream.finish()).toBe('what is twelve times seven');

    expect(fake.transcriptions).toHaveLength(1);
    const req = fake.transcriptions[0]!;
    expect(req.model).toBe('whisper-1');
    expect(req.fields).toEqual({ model: 'whisper-1', response_format: 'json' });
    expect(req.filename).toBe('audio.wav');
    expect(req.fileContentType).toBe('audio/wav');
    expect(req.headers.authorization).toBe('Bearer sk-test-123');
    expect(req.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);

    const wav = req.wav;
    expect(wav.length).toBe(44 + samples.length * 2);
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(36 + samples.length * 2);
    expect(wav.toString('latin1', 8, 16)).toBe('WAVEfmt ');
    expect(wav.readUInt32LE(16)).toBe(16);
    expect(req.header).toEqual({
      riffSize: 36 + samples.length * 2,
      format: 1,
      channels: 1,
      sampleRate: 16000,
      byteRate: 32000,
      blockAlign: 2,
      bitsPerSample: 16,
      dataOffset: 44,
      dataBytes: samples.length * 2,
    });
    expect(wav.toString('latin1', 36, 40)).toBe('data');
    expect(req.audioBytes).toBe(2 * samples.length);
    expect(req.sampleRate).toBe(16000);
    expect(req.durationMs).toBeCloseTo(1500, 6);
    const expected = Buffer.alloc(samples.length * 2);
    samples.forEach((s, i) => expected.writeInt16LE(s, i * 2));
    expect(wav.subarray(44).equals(expected)).toBe(true);
  });

  it('sends no authorization header without a key, and the language field when configured', async () => {
    await stt({ language: 'en' }).open().finish(); // empty: no request
    const stream = stt({ language: 'en' }).open();
    stream.write(ramp(1600));
    expect(await stream.finish()).toBe('hello');
    expect(fake.transcriptions).toHaveLength(1);
    const req = fake.transcriptions[0]!;
    expect(req.fields).toEqual({ model: 'whisper-1', response_format: 'json', language: 'en' });
    expect(req.headers.authorization).toBeUndefined();
  });

  it('answers empty audio with an empty transcript without a request', async () => {
    const stream = stt().open();
    stream.write(new Int16Array(0));
    expect(await stream.finish()).toBe('');
    expect(fake.transcriptions).toHaveLength(0);
  });

  it('scripts by request index and audio length; each stream is its own request', async () => {
    fake.scriptTranscription(({ index, audioBytes }) => `#${index} ${audioBytes}`);
    const model = stt({ baseUrl: `${fake.url}/` }); // trailing slash tolerated
    const a = model.open();
    const b = model.open();
    a.write(ramp(320));
    b.write(ramp(640));
    a.write(ramp(320));
    expect(await a.finish()).toBe('#0 1280');
    expect(await b.finish()).toBe('#1 1280');
    // finish() is idempotent and writes after it are ignored.
    a.write(ramp(320));
    expect(await a.finish()).toBe('#0 1280');
    expect(fake.transcriptions).toHaveLength(2);
  });

  it('429 is a retryable SpeechProviderError with the status and the server message', async () => {
    fake.scriptTranscription(() => ({ status: 429, error: 'Rate limit reached for whisper-1' }));
    const stream = stt().open();
    stream.write(ramp(800));
    const error = await rejection(stream.finish());
    expect(error.retryable).toBe(true);
    expect(error.status).toBe(429);
    expect(error.message).toBe('speech recognition: http HTTP 429: Rate limit reached for whisper-1');
    expect(error.publicDetail).toBe('speech recognition refused the request: rate limited (HTTP 429)');
  });

  it('400 is not retryable; 500 and 408 are', async () => {
    for (const [status, retryable] of [[400, false], [401, false], [408, true], [500, true], [503, true]] as const) {
      fake.scriptTranscription(() => ({ status, error: `failure ${status}` }));
      const stream = stt().open();
      stream.write(ramp(800));
      const error = await rejection(stream.finish());
      expect(error.status).toBe(status);
      expect(error.retryable).toBe(retryable);
      expect(error.message).toContain(`failure ${status}`);
    }
  });

  it('an unreachable server is a retryable error', async () => {
    const stream = stt({ baseUrl: 'http://127.0.0.1:1/v1' }).open();
    stream.write(ramp(800));
    const error = await rejection(stream.finish());
    expect(error.retryable).toBe(true);
    expect(error.status).toBeUndefined();
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.publicDetail).toBe('speech recognition could not be reached');
  });

  it('a slow server times out with a retryable error', async () => {
    fake.scriptTranscription(() => ({ text: 'late', delayMs: 2000 }));
    const stream = stt({ timeoutMs: 150 }).open();
    stream.write(ramp(800));
    const started = performance.now();
    const error = await rejection(stream.finish());
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('within 150 ms');
    expect(error.publicDetail).toBe('speech recognition did not answer in time');
  });

  it('abort() cancels the request in flight; finish() then resolves empty', async () => {
    fake.scriptTranscription(() => ({ text: 'too late', delayMs: 3000 }));
    const stream = stt().open();
    stream.write(ramp(1600));
    const result = stream.finish();
    await fake.until(() => fake.transcriptions.length === 1, 'the upload');
    const started = performance.now();
    stream.abort();
    expect(await result).toBe('');
    expect(performance.now() - started).toBeLessThan(500);
    await fake.until(() => fake.transcriptions[0]!.aborted, 'the upload to be cut');
  });

  it('abort() before finish() drops the audio without a request', async () => {
    const stream = stt().open();
    stream.write(ramp(1600));
    stream.abort();
    stream.write(ramp(1600));
    expect(await stream.finish()).toBe('');
    expect(fake.transcriptions).toHaveLength(0);
  });
});

describe('encodeWav', () => {
  it('writes the canonical 44-byte header', () => {
    const wav = encodeWav(new Int16Array([1, -1, 32767, -32768]), 16000);
    expect(Array.from(wav.subarray(0, 44))).toEqual([
      ...Buffer.from('RIFF'), 44, 0, 0, 0, ...Buffer.from('WAVEfmt '), 16, 0, 0, 0, 1, 0, 1, 0,
      0x80, 0x3e, 0, 0, 0x00, 0x7d, 0, 0, 2, 0, 16, 0, ...Buffer.from('data'), 8, 0, 0, 0,
    ]);
    expect(Array.from(wav.subarray(44))).toEqual([1, 0, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x80]);
  });
});

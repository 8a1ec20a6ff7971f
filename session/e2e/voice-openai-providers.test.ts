import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../signaling/config.ts';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import { startSession } from '../../signaling/testing/ws-test-client.ts';
import { concat, loadFixture, roomTone, streamRealtime } from '../../media/testing/audio-stream.ts';
import { startFakeOpenAiSpeechServer, TONE_MS_PER_CHAR, type FakeOpenAiSpeechServer } from '../testing/fake-openai-speech-server.ts';

let fake: FakeOpenAiSpeechServer;
let t: TestServer;
beforeAll(async () => {
  fake = await startFakeOpenAiSpeechServer();
  t = await startTestServer({
    ASR_PROVIDER: 'openai',
    ASR_BASE_URL: fake.url,
    ASR_API_KEY: 'sk-asr',
    TTS_PROVIDER: 'openai',
    TTS_BASE_URL: fake.url,
    TTS_VOICES: 'alloy,nova',
    LOCAL_LLM_WORD_DELAY_MS: '10',
  });
});
afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

describe('voice conversation through OpenAI-compatible speech providers', () => {
  it('transcribes the uploaded utterance and speaks the reply with the remote voice', async () => {
    fake.scriptTranscription(() => 'what is twelve times seven');
    const { client, ready } = await startSession(t.wsUrl, {
      session_id: 'voice-openai-1',
      api_key: t.key,
      mode: { kind: 'service', greeting: false },
      audio: { sr: 16000 },
    });
    expect(ready.voices.map((v) => v.voice)).toEqual(['alloy', 'nova']);
    expect(ready.voices[1]).toEqual({ voice: 'nova', name: 'Nova', language: 'en', gender: 'neutral' });
    // No DEFAULT_VOICE set: the first configured remote voice, not flite's 'kal16'.
    expect(ready.voice).toBe('alloy');
    expect(ready.audio).toEqual({ output_encoding: 'pcm16', output_sr: 16000 });

    const utterance = loadFixture('twelve.wav');
    const utteranceMs = utterance.length / 16;
    await streamRealtime(client, concat(roomTone(300), utterance, roomTone(1200)));
    const asr = await client.waitFor('asr', () => true, 8000);
    expect(asr.text).toBe('what is twelve times seven');
    expect(asr.input_source).toBe('voice');

    // One upload: a 16 kHz mono PCM16 WAV about as long as the utterance (plus preroll and the
    // trailing silence that ended the turn).
    expect(fake.transcriptions).toHaveLength(1);
    const upload = fake.transcriptions[0]!;
    expect(upload.model).toBe('whisper-1');
    expect(upload.headers.authorization).toBe('Bearer sk-asr');
    expect(upload.header).toMatchObject({ format: 1, channels: 1, sampleRate: 16000, bitsPerSample: 16, dataOffset: 44 });
    expect(upload.durationMs).toBeGreaterThan(utteranceMs * 0.7);
    expect(upload.durationMs).toBeLessThan(utteranceMs + 700);

    const done = await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 15000);
    expect(done.status).toBe('completed');
    const types = client.turnTypes(asr.turn_id!);
    expect(types[0]).toBe('asr');
    expect(types.at(-1)).toBe('done');
    const reply = client.all('utterance').find((u) => u.turn_id === asr.turn_id)!;
    expect(reply.text).toContain('84');

    // The reply was synthesised remotely, sentence by sentence, in the session's voice...
    expect(fake.speeches.length).toBeGreaterThan(0);
    for (const speech of fake.speeches) expect(speech).toMatchObject({ model: 'tts-1', voice: 'alloy', response_format: 'pcm', aborted: false });
    expect(fake.speeches.map((s) => s.input).join(' ')).toBe(reply.text);
    // ...and its 24 kHz tone reached the client resampled to 16 kHz, all of it.
    const downlink = Buffer.concat(client.audio);
    const samples = new Int16Array(downlink.buffer, downlink.byteOffset, downlink.length / 2);
    const downlinkMs = samples.length / 16;
    const toneMs = fake.speeches.reduce((ms, s) => ms + s.input.length * TONE_MS_PER_CHAR, 0);
    expect(Math.abs(downlinkMs - toneMs)).toBeLessThanOrEqual(40);
    expect(dominantFrequency(samples, 16000)).toBeGreaterThan(420);
    expect(dominantFrequency(samples, 16000)).toBeLessThan(460);
    client.assertProtocol();
    client.close();
  });
});

describe('speech provider configuration', () => {
  it.each([
    [{ ASR_PROVIDER: 'openai' }, 'ASR_BASE_URL'],
    [{ TTS_PROVIDER: 'openai' }, 'TTS_BASE_URL'],
    [{ TTS_VOICES: ' , ' }, 'TTS_VOICES'],
    [{ TTS_PROVIDER: 'openai', TTS_BASE_URL: 'http://127.0.0.1:1/v1', DEFAULT_VOICE: 'slt' }, 'DEFAULT_VOICE'],
  ])('rejects %j naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });

  it('defaults to the local providers and OpenAI model and voice names', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ ASR_PROVIDER: 'local', ASR_MODEL: 'whisper-1', TTS_PROVIDER: 'local', TTS_MODEL: 'tts-1', DEFAULT_VOICE: 'kal16' });
    expect(config.TTS_VOICES).toEqual(['alloy', 'echo', 'fable', 'onyx', 'nova', 'shimmer']);
    const remote = loadConfig({ TTS_PROVIDER: 'openai', TTS_BASE_URL: 'http://127.0.0.1:1/v1', TTS_VOICES: ' nova, alloy ' });
    expect(remote.TTS_VOICES).toEqual(['nova', 'alloy']);
    expect(remote.DEFAULT_VOICE).toBe('nova');
  });
});

/** Zero crossings over the non-silent samples, as a frequency. */
function dominantFrequency(samples: Int16Array, rate: number): number {
  let crossings = 0;
  let voiced = 0;
  for (let i = 1; i < samples.length; i += 1) {
    if (Math.abs(samples[i]!) + Math.abs(samples[i - 1]!) === 0) continue;
    voiced += 1;
    if ((samples[i - 1]! < 0) !== (samples[i]! < 0)) crossings += 1;
  }
  return voiced === 0 ? 0 : crossings / 2 / (voiced / rate);
}

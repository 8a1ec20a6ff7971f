import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it as base } from 'vitest';
import { openText, sid, voiceStart, waitTurn, WAIT_MS } from '../../signaling/testing/conversation.ts';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import { startSession, type WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import { concat, loadFixture, roomTone, streamRealtime } from '../../media/testing/audio-stream.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../testing/fake-openai-server.ts';
import { startFakeOpenAiSpeechServer, tone, toneReply, type FakeOpenAiSpeechServer } from '../testing/fake-openai-speech-server.ts';

/**
 * Provider faults as a client lives them (#21): a stalled model or speech stream ends its turn
 * with an error frame and `done`, recognition failures are told, and nothing a client or the log
 * reads quotes the provider's URLs, hosts or keys.
 */

const KEY = 'sk-live-Z8yQ3vN6pR1tK4mX7bC0dF2gH5jL9wS';
const MASKED = 'sk-live-****L9wS';

/** One test's world: its own fake providers and a server logging to `logLines`. */
interface Rig {
  llm: FakeOpenAiServer;
  speech: FakeOpenAiSpeechServer;
  t: TestServer;
  logLines: string[];
}

// Every test has a rig of its own, so the tests run side by side: most of their time is spent
// waiting out stalls and real-time audio.
const it = base.extend<{ rig: Rig }>({
  rig: async ({}, use) => {
    const llm = await startFakeOpenAiServer();
    const speech = await startFakeOpenAiSpeechServer();
    const logLines: string[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => (logLines.push(chunk.toString('utf8')), done()) }));
    const t = await startTestServer(
      {
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: llm.url,
        LLM_API_KEY: KEY,
        LLM_IDLE_TIMEOUT_MS: '200',
        ASR_PROVIDER: 'openai',
        ASR_BASE_URL: speech.url,
        ASR_TIMEOUT_MS: '300',
        TTS_PROVIDER: 'openai',
        TTS_BASE_URL: speech.url,
        TTS_IDLE_TIMEOUT_MS: '200',
        TTS_VOICES: 'alloy',
      },
      { log },
    );
    await use({ llm, speech, t, logLines });
    await t.stop();
    await llm.close();
    await speech.close();
  },
});

async function send(client: WsTestClient, text: string): Promise<string> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  return (await client.waitFor('asr', (f) => f.text === text, WAIT_MS, after)).turn_id as string;
}

/** The turn's frames from its first utterance or error on, by type (error frames carry no turn id). */
function order(client: WsTestClient, turnId: string): string[] {
  const start = client.frames.findIndex((f) => f.type === 'turn' && f.turn_id === turnId);
  const tail = client.frames.slice(start).filter((f) => f.type === 'error' || (f.type !== 'text_delta' && 'turn_id' in f && f.turn_id === turnId));
  const end = tail.findIndex((f) => f.type === 'done');
  return tail.slice(0, end + 1).map((f) => f.type).filter((ty) => ty !== 'turn');
}

describe.concurrent('a stalled model stream', () => {
  it('ends the turn: text so far, error model_error, utterance with that text, done error; the session goes on', async ({ rig: { llm, t } }) => {
    const { client } = await openText(t, { greeting: false });
    llm.enqueue({ stallAfterText: 'I was saying that ' });
    const turnId = await send(client, 'go on');
    const reply = await waitTurn(client, turnId);
    expect(reply.done.status).toBe('error');
    expect(reply.deltas).toBe('I was saying that ');
    expect(reply.utterance?.text).toBe('I was saying that ');
    expect(client.all('error').map((e) => [e.code, e.detail])).toEqual([['model_error', 'the model stopped sending mid-answer']]);
    expect(order(client, turnId)).toEqual(['error', 'utterance', 'done']);
    llm.enqueue({ text: 'Back.' });
    expect((await waitTurn(client, await send(client, 'again'))).utterance?.text).toBe('Back.');
    client.close();
    client.assertProtocol();
  });
});

describe.concurrent('provider error details', () => {
  it('the client reads our words; neither the frame nor the log holds the key, its masked form, URLs or hosts', async ({ rig: { llm, t, logLines } }) => {
    const { client } = await openText(t, { greeting: false });
    llm.enqueue({
      status: 401,
      contentType: 'application/json',
      body: JSON.stringify({ error: { message: `Incorrect API key provided: ${MASKED}. See https://platform.example.com/keys (via gw-2.internal:8443).` } }),
    });
    const turnId = await send(client, 'hello');
    expect((await waitTurn(client, turnId)).done.status).toBe('error');
    const [error] = client.all('error');
    expect(error).toMatchObject({ code: 'model_error', retryable: true, detail: 'the model refused the request: credentials not accepted (HTTP 401)' });
    const log = logLines.join('');
    expect(log).toContain('Incorrect API key provided');
    for (const secret of [KEY, MASKED, 'L9wS', 'https://', 'platform.example.com', 'gw-2.internal', '8443']) {
      expect(JSON.stringify(error)).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
    client.close();
  });
});

describe.concurrent('speech provider failures reach the client', () => {
  async function voiceSession(t: TestServer, greeting: string | false): Promise<WsTestClient> {
    const { client } = await startSession(t.wsUrl, { ...voiceStart(sid(), { greeting }), api_key: t.key });
    return client;
  }

  it('a recogniser that fails or hangs: error asr_error, no turn, the session goes on', async ({ rig: { speech, t } }) => {
    for (const reply of [{ status: 500, error: 'GPU fell over at http://asr.internal:9000' }, { hang: true as const }]) {
      speech.scriptTranscription(() => reply);
      const client = await voiceSession(t, false);
      await streamRealtime(client, concat(roomTone(200), loadFixture('twelve.wav'), roomTone(600)));
      const error = await client.waitFor('error', () => true, WAIT_MS);
      expect(error).toMatchObject({ code: 'asr_error', retryable: true });
      expect(error.detail).toMatch(/^speech recognition (refused the request: provider failure \(HTTP 500\)|did not answer in time)$/);
      expect(client.all('turn')).toEqual([]);
      client.close();
      client.assertProtocol();
    }
  });

  it('synthesis that stalls mid-sentence: error tts_error, the utterance corrected to what was sent, done error', async ({ rig: { speech, t } }) => {
    // The first sentence stops after 100 ms of audio; the second is never synthesised.
    speech.scriptSpeech((request, index) => (index === speech.speeches.length - 1 && request.input.startsWith('First') ? { pcm: tone(800), stopAfterBytes: 4800 } : toneReply(request.input)));
    const client = await voiceSession(t, 'First part of the greeting. Second part that is never heard.');
    const turn = await client.waitFor('turn', () => true, WAIT_MS);
    const done = await client.waitFor('done', (f) => f.turn_id === turn.turn_id, WAIT_MS);
    expect(done.status).toBe('error');
    expect(order(client, turn.turn_id)).toEqual(['utterance', 'error', 'utterance', 'done']);
    expect(client.all('error').map((e) => [e.code, e.detail])).toEqual([['tts_error', 'speech synthesis stopped sending mid-answer']]);
    const utterances = client.all('utterance').filter((u) => u.turn_id === turn.turn_id);
    expect(utterances.map((u) => u.corrected)).toEqual([false, true]);
    expect(utterances[0]!.text).toBe('First part of the greeting. Second part that is never heard.');
    expect(utterances[1]!.text).not.toContain('Second part');
    expect(speech.speeches.some((s) => s.input.startsWith('Second'))).toBe(false);
    client.close();
    client.assertProtocol();
  });
});

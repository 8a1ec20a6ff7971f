import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RealtimeClient, RealtimeError, sendFeedback, type RealtimeClientEventMap, type ServerFrameOf } from '../src/index.ts';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import { loadFixture, roomTone, concat } from '../../media/testing/audio-stream.ts';
import { TONE_MS_PER_CHAR } from '../../session/testing/fake-openai-speech-server.ts';
import { useRemoteSpeechServer } from '../../signaling/testing/remote-speech.ts';

/**
 * The same RealtimeClient in Node (Node 20 has no global WebSocket: the ws package's class is
 * passed in), as a server-to-server relay or a test would use it: a text conversation with a
 * client tool, a dropped socket that resumes, a one-shot report, and a voice turn whose audio
 * arrives as `audio` events (there is no Web Audio here).
 */

const clients: RealtimeClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.closeAndWait();
});

function track(client: RealtimeClient): RealtimeClient {
  clients.push(client);
  return client;
}

/** Resolves with the next `done` frame (the end of a reply) and the text that came with it. */
function reply(client: RealtimeClient): Promise<{ done: ServerFrameOf<'done'>; text: string }> {
  return new Promise((resolve) => {
    let text = '';
    const onDelta = (e: CustomEvent<ServerFrameOf<'text_delta'>>): void => void (text += e.detail.delta);
    client.addEventListener('text_delta', onDelta);
    client.addEventListener(
      'done',
      (e) => {
        client.removeEventListener('text_delta', onDelta);
        resolve({ done: e.detail, text });
      },
      { once: true },
    );
  });
}

function next<K extends keyof RealtimeClientEventMap>(client: RealtimeClient, type: K): Promise<RealtimeClientEventMap[K]> {
  return new Promise((resolve) => client.addEventListener(type, (e) => resolve(e), { once: true }));
}

describe('RealtimeClient in Node, text', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ LOCAL_LLM_WORD_DELAY_MS: '0' }, { voice: { ok: false, reason: 'text only' } });
  });
  afterAll(async () => t?.stop());

  it('without a WebSocket class in Node 20 the constructor says what to pass', () => {
    if (typeof (globalThis as { WebSocket?: unknown }).WebSocket !== 'undefined') return;
    expect(() => new RealtimeClient({ url: t.wsUrl })).toThrow(/pass the ws package's class/);
  });

  it('holds a conversation: typed text_delta events, a client tool answered from Node, a resume after a dropped socket', async () => {
    const client = track(
      new RealtimeClient({
        url: t.wsUrl,
        apiKey: t.key,
        WebSocket,
        reconnectBaseMs: 20,
        mode: {
          modality: 'text',
          greeting: false,
          tools: [{ name: 'lookup_order', description: 'Order status', parameters: { type: 'object', properties: { order: { type: 'string' } } } }],
        },
      }),
    );
    const ready = await client.connect();
    expect(ready.modality).toBe('text');
    expect(ready.resume_token).toEqual(expect.any(String));

    const answer = reply(client);
    expect(client.sendText('What is twelve times seven?')).toBe(true);
    const first = await answer;
    expect(first.done.status).toBe('completed');
    expect(first.text).toContain('84');

    // The model calls the declared tool; the Node host answers it.
    const called = next(client, 'tool_call');
    const toolTurn = reply(client);
    client.sendText('please call lookup_order order=A17');
    const call = (await called).detail;
    expect(call).toMatchObject({ name: 'lookup_order', args: { order: 'A17' } });
    expect(client.sendToolResult(call.id, { status: 'shipped' }, { outcome: 'succeeded', verified: true })).toBe(true);
    const told = await toolTurn;
    expect(told.done.status).toBe('completed');
    expect(told.text).toContain('shipped');

    // The socket drops; the library reconnects and resumes: the conversation goes on.
    const name = reply(client);
    client.sendText('My name is Ada.');
    await name;
    const reconnected = next(client, 'reconnected');
    expect(client._debugDropSocket(4000)).toBe(true);
    expect((await reconnected).detail).toMatchObject({ resumed: true });
    const remembered = reply(client);
    client.sendText('What is my name?');
    expect((await remembered).text).toContain('Ada');
    expect(client.state).toBe('open');
  });

  it('a refused start rejects connect() with the server code; one-shot reports work from Node', async () => {
    const refused = track(new RealtimeClient({ url: t.wsUrl, apiKey: 'ck_wrong', WebSocket, autoReconnect: false, mode: { modality: 'text' } }));
    const error = await refused.connect().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RealtimeError);
    expect((error as RealtimeError).code).toBe('unauthorized');

    const ack = await sendFeedback({ url: t.wsUrl, sessionId: 'node-feedback-1', rating: 5, text: 'relayed from Node', apiKey: t.key, WebSocket });
    expect(ack.id).toEqual(expect.any(String));
  });
});

describe('RealtimeClient in Node, voice', () => {
  const rig = useRemoteSpeechServer({ TTS_VOICES: 'alloy', LOCAL_LLM_WORD_DELAY_MS: '0' });

  it('microphone frames pushed from Node make a turn; the reply arrives as audio events', async () => {
    rig.fake.scriptTranscription(() => 'what is twelve times seven');
    const client = track(new RealtimeClient({ url: rig.t.wsUrl, apiKey: rig.t.key, WebSocket, mode: { modality: 'voice', greeting: false } }));
    await client.connect();
    let audioMs = 0;
    client.addEventListener('audio', (e) => void (audioMs += (e.detail.samples.length / e.detail.sr) * 1000));
    const asr = new Promise<ServerFrameOf<'asr'>>((resolve) => client.addEventListener('asr', (e) => resolve(e.detail), { once: true }));
    const answer = reply(client);

    const speech = concat(roomTone(300), loadFixture('twelve.wav'), roomTone(1200));
    for (let at = 0; at < speech.length; at += 320) {
      const frame = Float32Array.from(speech.subarray(at, at + 320), (s) => s / 32768);
      expect(client.pushMicFrame(frame)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await asr).text).toBe('what is twelve times seven');
    const done = await answer;
    expect(done.done.status).toBe('completed');
    expect(done.text).toContain('84');
    // The reply's audio came through whole: as long as the fake voice's tone for the text spoken.
    const spokenMs = rig.fake.speeches.reduce((ms, s) => ms + s.input.length * TONE_MS_PER_CHAR, 0);
    await expect.poll(() => audioMs, { timeout: 10_000 }).toBeGreaterThanOrEqual(spokenMs - 40);
    expect(audioMs).toBeLessThanOrEqual(spokenMs + 40);
  }, 30_000);
});

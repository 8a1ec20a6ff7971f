import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAlive, openText, WAIT_MS, waitTurn } from '../../signaling/testing/conversation.ts';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import type { WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../testing/fake-openai-server.ts';

/**
 * Model failures through the real adapter and a fake OpenAI-compatible server on a real port: an
 * HTTP error, an unreachable endpoint, a timeout. Each ends only its turn (model_error,
 * retryable; done 'error') and touches no other session. How a turn ends on each kind of
 * failure: session/turn-runner.test.ts.
 */

let fake: FakeOpenAiServer;
let t: TestServer;
beforeAll(async () => {
  fake = await startFakeOpenAiServer();
  t = await startTestServer({ LLM_PROVIDER: 'openai', LLM_BASE_URL: fake.url });
});
afterAll(async () => {
  await t.stop();
  await fake.close();
});

/** Sends input_text and returns the turn id from its asr. */
async function send(client: WsTestClient, text: string): Promise<{ turnId: string; after: number }> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text, WAIT_MS, after);
  return { turnId: asr.turn_id as string, after };
}

describe('model errors', () => {
  it('a model error in one session does not touch another', async () => {
    const a = await openText(t, { greeting: false });
    const b = await openText(t, { greeting: false });
    fake.enqueue({ status: 500, error: 'boom' });
    const sent = await send(a.client, 'first');
    await a.client.waitFor('done', (f) => f.turn_id === sent.turnId);
    fake.enqueue({ text: 'fine' });
    await expectAlive(b.client, 'second');
    expect(b.client.all('error')).toEqual([]);
    a.client.close();
    b.client.close();
    a.client.assertProtocol();
    b.client.assertProtocol();
  });
});

describe('model unreachable or slow', () => {
  it('an unreachable model endpoint → model_error, done error, session alive', async () => {
    // A port that was just free: nothing listens there.
    const closed = await startFakeOpenAiServer();
    const url = closed.url;
    await closed.close();
    const dead = await startTestServer({ LLM_PROVIDER: 'openai', LLM_BASE_URL: url });
    try {
      const { client } = await openText(dead, { greeting: false });
      const { turnId } = await send(client, 'hello');
      const done = await client.waitFor('done', (f) => f.turn_id === turnId);
      expect(done.status).toBe('error');
      expect(client.all('error').map((e) => [e.code, e.retryable])).toEqual([['model_error', true]]);
      // Still alive: set_voice is answered.
      client.send({ type: 'set_voice', voice: 'rms' });
      await client.waitFor('voice');
      client.close();
      client.assertProtocol();
    } finally {
      await dead.stop();
    }
  });

  it('no response headers within LLM_TIMEOUT_MS → model_error, done error', async () => {
    const slowFake = await startFakeOpenAiServer();
    const server = await startTestServer({ LLM_PROVIDER: 'openai', LLM_BASE_URL: slowFake.url, LLM_TIMEOUT_MS: '300' });
    try {
      slowFake.enqueue({ hang: true, beforeHeaders: true });
      const { client } = await openText(server, { greeting: false });
      const { turnId } = await send(client, 'hello');
      const done = await client.waitFor('done', (f) => f.turn_id === turnId);
      expect(done.status).toBe('error');
      expect(client.all('error').map((e) => [e.code, e.retryable])).toEqual([['model_error', true]]);
      slowFake.enqueue({ text: 'on time' });
      const next = await send(client, 'again');
      expect((await waitTurn(client, next.turnId)).utterance?.text).toBe('on time');
      client.close();
      client.assertProtocol();
    } finally {
      await server.stop();
      await slowFake.close();
    }
  });
});

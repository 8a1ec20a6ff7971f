import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAlive, openText, WAIT_MS, waitTurn } from '../../signaling/testing/conversation.ts';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import type { WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../testing/fake-openai-server.ts';

/**
 * Model failures through the fake OpenAI-compatible server: each ends only its turn, with an
 * error frame (model_error, retryable) and done status 'error'; the session goes on.
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

function position(client: WsTestClient, frame: object | undefined): number {
  return client.frames.findIndex((f) => f === frame);
}

describe('model errors', () => {
  it.each([
    [500, 'internal failure'],
    [503, 'overloaded'],
    [429, 'rate limited'],
  ])('HTTP %i at request → error model_error (retryable), done error; the next input works', async (status, message) => {
    const { client } = await openText(t, { greeting: false });
    fake.enqueue({ status, error: message });
    const { turnId, after } = await send(client, 'hello');
    const done = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(done.status).toBe('error');
    const errors = client.frames.slice(after).filter((f) => f.type === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ type: 'error', code: 'model_error', retryable: true, detail: expect.any(String) });
    // The error comes after the turn began and before it ended.
    const turn = client.all('turn').find((f) => f.turn_id === turnId);
    expect(position(client, turn)).toBeLessThan(position(client, errors[0]));
    expect(position(client, errors[0])).toBeLessThan(position(client, done));
    // Nothing was said, so there is no utterance and no delta for the turn.
    expect(client.turnTypes(turnId)).toEqual(['asr', 'turn', 'done']);

    fake.enqueue({ text: 'Back to normal.' });
    const next = await send(client, 'again');
    const reply = await waitTurn(client, next.turnId);
    expect(reply.done.status).toBe('completed');
    expect(reply.utterance?.text).toBe('Back to normal.');
    expect(client.closed).toBeUndefined();
    client.close();
    client.assertProtocol();
  });

  it('a stream that breaks mid-reply → text_delta(s), error model_error, utterance with the partial text, done error', async () => {
    const { client } = await openText(t, { greeting: false });
    const partial = 'This answer starts well and then';
    // The fake destroys its socket right after the last write, which can drop writes still
    // buffered; a pause between chunks lets the first words reach us before the break.
    fake.delayMs = 20;
    fake.enqueue({ failAfterText: partial });
    let turnId: string;
    let after: number;
    try {
      ({ turnId, after } = await send(client, 'tell me something'));
      await client.waitFor('done', (f) => f.turn_id === turnId);
    } finally {
      fake.delayMs = 0;
    }
    const done = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(done.status).toBe('error');

    const reply = await waitTurn(client, turnId);
    expect(reply.deltas.length).toBeGreaterThan(0);
    expect(partial.startsWith(reply.deltas)).toBe(true);
    expect(reply.utterance).toMatchObject({ type: 'utterance', text: reply.deltas, turn_id: turnId, corrected: false });

    const errors = client.frames.slice(after).filter((f) => f.type === 'error');
    expect(errors.map((e) => [(e as { code: string }).code, (e as { retryable: boolean }).retryable])).toEqual([['model_error', true]]);
    const deltas = client.all('text_delta').filter((f) => f.turn_id === turnId);
    expect(deltas.length).toBeGreaterThan(0);
    const lastDelta = position(client, deltas.at(-1));
    const error = position(client, errors[0]);
    expect(lastDelta).toBeLessThan(error);
    expect(error).toBeLessThan(position(client, reply.utterance));
    expect(position(client, reply.utterance)).toBeLessThan(position(client, done));

    fake.enqueue({ text: 'Recovered.' });
    const next = await send(client, 'again');
    expect((await waitTurn(client, next.turnId)).utterance?.text).toBe('Recovered.');
    client.close();
    client.assertProtocol();
  });

  it('an interrupt while the model has not answered yet ends the turn as interrupted, not as an error', async () => {
    const { client } = await openText(t, { greeting: false });
    fake.enqueue({ hang: true, beforeHeaders: true });
    const { turnId, after } = await send(client, 'are you there');
    await client.waitFor('turn', (f) => f.turn_id === turnId, WAIT_MS, after);
    client.send({ type: 'interrupt' });
    const done = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(done.status).toBe('interrupted');
    fake.enqueue({ text: 'Yes.' });
    const next = await send(client, 'hello');
    expect((await waitTurn(client, next.turnId)).utterance?.text).toBe('Yes.');
    expect(client.all('error')).toEqual([]);
    client.close();
    client.assertProtocol();
  });

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

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openText, say } from '../../signaling/testing/conversation.ts';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import type { WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../testing/fake-openai-server.ts';

/**
 * A text conversation over the real socket: the frames of a typed turn as they cross the wire,
 * and the Chat Completions request the real adapter sends. Every other text behaviour is a unit
 * test: session/session.test.ts.
 */

const DEFAULT_GREETING = 'Hello! How can I help you today?';

let fast: TestServer;
beforeAll(async () => {
  fast = await startTestServer();
});
afterAll(async () => {
  await fast.stop();
});

function indexOf(client: WsTestClient, predicate: (f: (typeof client.frames)[number]) => boolean): number {
  return client.frames.findIndex(predicate);
}

describe('a typed turn over the socket', () => {
  it('asr → turn → text_delta+ → utterance → done, all one turn_id, in that order', async () => {
    const { client } = await openText(fast, { greeting: false });
    const reply = await say(client, 'say the quick brown fox jumps');
    expect(reply.asr).toEqual({ type: 'asr', text: 'say the quick brown fox jumps', turn_id: reply.turnId, input_source: 'text' });

    const types = reply.types;
    expect(types[0]).toBe('asr');
    expect(types[1]).toBe('turn');
    expect(types.slice(2, -2).length).toBeGreaterThan(1);
    expect(types.slice(2, -2).every((type) => type === 'text_delta')).toBe(true);
    expect(types.slice(-2)).toEqual(['utterance', 'done']);

    expect(reply.deltas).toBe('the quick brown fox jumps');
    expect(reply.utterance).toEqual({ type: 'utterance', text: reply.deltas, turn_id: reply.turnId, barge_seq: 0, corrected: false });
    // done carries the turn's waterfall (a typed turn has the model's first token and the first delta) and its usage.
    expect(reply.done).toEqual({
      type: 'done', turn_id: reply.turnId, status: 'completed',
      metrics: { llm_first_token: expect.any(Number), text_first_delta: expect.any(Number) },
      usage: expect.objectContaining({ llm_tokens_estimated: true }),
    });

    // Nothing of another turn is interleaved: every frame from asr to done is this turn's.
    const from = indexOf(client, (f) => f === reply.asr);
    const to = indexOf(client, (f) => f === reply.done);
    expect(client.frames.slice(from, to + 1).every((f) => 'turn_id' in f && f.turn_id === reply.turnId)).toBe(true);
    client.close();
    client.assertProtocol();
  });});

describe('the model request (fake OpenAI-compatible server)', () => {
  let fake: FakeOpenAiServer;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startFakeOpenAiServer();
    t = await startTestServer({ LLM_PROVIDER: 'openai', LLM_BASE_URL: fake.url, LLM_MODEL: 'fake-model' });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  type Body = { model: string; stream: boolean; temperature?: number; messages: Array<{ role: string; content: string }> };
  const body = (index: number): Body => fake.requests[index] as Body;

  it('carries the whole history (system, greeting as assistant, user turns) and mode.temperature', async () => {
    const { client } = await openText(t, { temperature: 0.3, instructions: 'Speak like a pirate.' });
    const first = fake.requests.length;
    fake.enqueue({ text: 'Ahoy there, matey.' });
    const a = await say(client, 'hello');
    expect(a.utterance?.text).toBe('Ahoy there, matey.');
    expect(a.deltas).toBe('Ahoy there, matey.');
    expect(fake.requests.length).toBe(first + 1);
    const req1 = body(first);
    expect(req1.model).toBe('fake-model');
    expect(req1.stream).toBe(true);
    expect(req1.temperature).toBe(0.3);
    expect(req1.messages[0]?.role).toBe('system');
    expect(req1.messages[0]?.content).toContain('Speak like a pirate.');
    expect(req1.messages.slice(1)).toEqual([
      { role: 'assistant', content: DEFAULT_GREETING },
      { role: 'user', content: 'hello' },
    ]);

    fake.enqueue({ text: 'Arr, it be Tuesday.' });
    await say(client, 'what day is it');
    const req2 = body(first + 1);
    expect(req2.messages.slice(1)).toEqual([
      { role: 'assistant', content: DEFAULT_GREETING },
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'Ahoy there, matey.' },
      { role: 'user', content: 'what day is it' },
    ]);
    expect(req2.temperature).toBe(0.3);
    client.close();
    client.assertProtocol();
  });});

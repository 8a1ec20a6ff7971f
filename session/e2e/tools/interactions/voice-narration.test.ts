import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone, streamRealtime } from '../../../../media/testing/audio-stream.ts';
import { startTestServer, type TestServer } from '../../../../signaling/testing/test-server.ts';
import { startSession, type WsTestClient } from '../../../../signaling/testing/ws-test-client.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../../testing/fake-openai-server.ts';
import type { WireRequest } from '../tool-test-kit.ts';
import { book, isNarration, narration, narrationTurn, statesOf, TEST_TIMING } from './interaction-kit.ts';

/**
 * The barge rows of SPEC "Interaction narration states", in voice, where "heard" means audio of
 * the narration was sent: a barge before anything was heard supersedes the narration; a barge
 * after part of it was heard leaves it started (voiced), so the user's turn is constrained to
 * interaction_transition. Offline speech (flite, pocketsphinx) and the fake model.
 */

let fake: FakeOpenAiServer;
let t: TestServer;
let n = 0;
let narrationReply: () => unknown = () => ({ text: 'ok' });

beforeAll(async () => {
  fake = await startFakeOpenAiServer();
  t = await startTestServer({ LLM_PROVIDER: 'openai', LLM_BASE_URL: fake.url, ...TEST_TIMING });
  fake.script((body: WireRequest) => (isNarration(body) ? narrationReply() : { text: 'ok' }) as never);
});
afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

/** A voice session with a deferred `book` job (call id `call_v<n>`); returns the call id. */
async function voiceWithJob(): Promise<{ client: WsTestClient; callId: string }> {
  n += 1;
  const callId = `call_v${n}`;
  const { client } = await startSession(t.wsUrl, { session_id: `vn-${n}-${Date.now()}`, api_key: t.key, mode: { kind: 'service', greeting: false, tools: [book] }, audio: { sr: 16000 } });
  fake.enqueue({ toolCalls: [{ id: callId, name: 'book', args: {} }] });
  client.send({ type: 'inject_context', message_id: `m-${n}`, role: 'user', text: 'book a table', reply: true });
  const ack = await client.waitFor('inject_context_ack', () => true, 5000);
  await client.waitFor('tool_call', (f) => f.id === callId, 5000);
  client.send({ type: 'tool_deferred', id: callId, handle: `h-${callId}` });
  await client.waitFor('done', (f) => f.turn_id === ack.turn_id, 10000);
  return { client, callId };
}

async function audioAfter(client: WsTestClient, count: number, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (client.audio.length <= count) {
    if (Date.now() > deadline) throw new Error('no narration audio');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('barge-in and interaction narration (voice)', () => {
  it('started → superseded: a barge before anything of the narration was heard (no audio sent)', async () => {
    narrationReply = () => ({ hang: true });
    const { client, callId } = await voiceWithJob();
    client.send({ type: 'tool_partial_result', id: callId, content: {}, interaction: { id: 'v-ask-1', prompt: 'Garden or window?', options: ['garden', 'window'] } });
    const started = await narration(client, 'started', 'v-ask-1');
    const turnId = await narrationTurn(client, started);
    const audioBefore = client.audio.length;
    void streamRealtime(client, concat(roomTone(200), loadFixture('name.wav'), roomTone(1200)));
    await narration(client, 'superseded', 'v-ask-1', 0, 8000);
    const interrupted = await client.waitFor('done', (f) => f.turn_id === turnId, 8000);
    expect(interrupted.status).toBe('interrupted');
    expect(client.audio.length).toBe(audioBefore);
    const asr = await client.waitFor('asr', (f) => f.input_source === 'voice', 10000);
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 10000);
    // Not voiced: the user's turn is not constrained.
    const userRound = (fake.requests as WireRequest[]).filter((b) => !isNarration(b)).at(-1)!;
    expect(userRound.tool_choice).toBe('auto');
    expect(statesOf(client, 'v-ask-1')).toEqual(['started', 'superseded']);
    client.assertProtocol();
    client.close();
  });

  it('queued → superseded: a barge while the ask waits behind a reply being spoken', async () => {
    narrationReply = () => ({ text: 'ok' });
    const { client, callId } = await voiceWithJob();
    fake.enqueue({ text: 'Here is a long answer about tables and gardens and windows, spoken slowly so that there is time to interrupt it. It goes on for a while longer.' });
    client.send({ type: 'inject_context', message_id: 'm-long', role: 'user', text: 'tell me about the tables', reply: true });
    const ack = await client.waitFor('inject_context_ack', (f) => f.message_id === 'm-long', 5000);
    await audioAfter(client, client.audio.length);
    client.send({ type: 'tool_partial_result', id: callId, content: {}, interaction: { id: 'v-ask-q', prompt: 'Garden or window?', options: ['garden', 'window'] } });
    await narration(client, 'queued', 'v-ask-q');
    void streamRealtime(client, concat(loadFixture('name.wav'), roomTone(1200)));
    const superseded = await narration(client, 'superseded', 'v-ask-q', 0, 8000);
    const interrupted = await client.waitFor('interrupted', (f) => f.turn_id === ack.turn_id, 8000);
    // Superseded at the barge, before the interrupted reply's transcript turn.
    expect(client.frames.indexOf(superseded)).toBeLessThan(client.frames.indexOf(interrupted));
    const asr = await client.waitFor('asr', (f) => f.input_source === 'voice', 10000);
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 10000);
    expect(statesOf(client, 'v-ask-q')).toEqual(['queued', 'superseded']);
    client.assertProtocol();
    client.close();
  });

  it('a barge after part of the narration was heard leaves it started; the user turn opens with interaction_transition', async () => {
    narrationReply = () => ({ text: 'Would you like the small table by the window, or the large table out in the garden where it is quieter? Please tell me which one you prefer.' });
    const { client, callId } = await voiceWithJob();
    client.send({ type: 'tool_partial_result', id: callId, content: {}, interaction: { id: 'v-ask-2', prompt: 'Garden or window?', options: ['garden', 'window'] } });
    const started = await narration(client, 'started', 'v-ask-2');
    const turnId = await narrationTurn(client, started);
    await audioAfter(client, client.audio.length);
    await new Promise((r) => setTimeout(r, 1200));
    void streamRealtime(client, concat(loadFixture('name.wav'), roomTone(1200)));
    const done = await client.waitFor('done', (f) => f.turn_id === turnId, 8000);
    expect(done.status).toBe('interrupted');
    const asr = await client.waitFor('asr', (f) => f.input_source === 'voice', 10000);
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 10000);
    expect(statesOf(client, 'v-ask-2')).toEqual(['started']);
    const userRound = (fake.requests as WireRequest[]).filter((b) => !isNarration(b)).at(-1)!;
    expect(userRound.tool_choice).toEqual({ type: 'function', function: { name: 'interaction_transition' } });
    client.assertProtocol();
    client.close();
  });
});

import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../testing/fake-openai-server.ts';
import { startTestServer, type TestServer } from '../../../signaling/testing/test-server.ts';
import { startSession, WsTestClient } from '../../../signaling/testing/ws-test-client.ts';
import { sid, textStart } from '../../../signaling/testing/conversation.ts';

let fake: FakeOpenAiServer;
let t: TestServer;
const open: WsTestClient[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAiServer();
  t = await startTestServer({ LLM_PROVIDER: 'openai', LLM_BASE_URL: fake.url, HEARTBEAT_INTERVAL_MS: '200' });
});
afterAll(async () => {
  await t.stop();
  await fake.close();
});
afterEach(() => {
  for (const c of open.splice(0)) c.ws.terminate();
});

async function start(sessionId: string, extra: Record<string, unknown> = {}, mode: Record<string, unknown> = {}) {
  const s = await startSession(t.wsUrl, { ...textStart(sessionId, { greeting: false, ...mode }), api_key: t.key, ...extra });
  open.push(s.client);
  return s;
}

/** An abnormal drop, as a lost network would cause: no close handshake. Resolves once the server stashed the call. */
async function drop(client: WsTestClient): Promise<void> {
  const token = client.all('ready')[0]!.resume_token;
  client.ws.terminate();
  await client.waitClose();
  await t.whenStashed(token);
}

async function say(client: WsTestClient, text: string): Promise<string> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text, 5000, after);
  await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 8000);
  return asr.turn_id!;
}

const messagesOf = (index: number) => (fake.requests[index] as { messages: { role: string; content: string | null }[] }).messages;

/**
 * Resume over a real drop (SPEC "Resume"): the token in ready, the stash behind the socket, the
 * refusals, the heartbeat that finds a dead peer, a scoped key expiring. What a resumed
 * conversation keeps: session/resume/resume.test.ts.
 */
describe('resume', () => {
  it('an idle drop resumes with the full history, a new token and no second greeting', async () => {
    const sessionId = sid('idle');
    const { client, ready } = await start(sessionId, {}, { greeting: 'Hi there.' });
    await client.waitFor('done');
    fake.enqueue({ text: 'Nice to meet you, Ada.' });
    await say(client, 'my name is Ada');
    await drop(client);

    const again = await start(sessionId, { resume_token: ready.resume_token }, { greeting: 'Hi there.' });
    expect(again.ready.resume_token).not.toBe(ready.resume_token);
    fake.enqueue({ text: 'You are Ada.' });
    const before = fake.requests.length;
    await say(again.client, 'who am I?');
    const contents = messagesOf(before).map((m) => `${m.role}:${m.content}`);
    expect(contents).toContain('assistant:Hi there.');
    expect(contents).toContain('user:my name is Ada');
    expect(contents).toContain('assistant:Nice to meet you, Ada.');
    expect(contents.at(-1)).toBe('user:who am I?');
    // No greeting after the resume: the first turn is the answer to "who am I?".
    expect(again.client.all('turn')).toHaveLength(1);
    again.client.assertProtocol();
  });

  it('refuses a reused, unknown or cross-account token with resume_failed, and a fresh start works on the same socket', async () => {
    const sessionId = sid('bad');
    const { client, ready } = await start(sessionId);
    await drop(client);
    const first = await start(sessionId, { resume_token: ready.resume_token });
    first.client.close();

    for (const token of [ready.resume_token, 'rt_unknown']) {
      const c = await WsTestClient.open(t.wsUrl);
      open.push(c);
      c.send({ type: 'start', ...textStart(sessionId), api_key: t.key, resume_token: token });
      const error = await c.waitFor('error');
      expect(error).toMatchObject({ code: 'resume_failed', retryable: false });
      c.send({ type: 'start', ...textStart(sessionId), api_key: t.key });
      await c.waitFor('ready');
      c.assertProtocol();
    }

    // Cross-account: another account's key cannot take the conversation, and its owner still can.
    const other = await t.server.context.stores.keys.create('globex');
    const victim = await start(sessionId);
    await drop(victim.client);
    const thief = await WsTestClient.open(t.wsUrl);
    open.push(thief);
    thief.send({ type: 'start', ...textStart(sessionId), api_key: other.key, resume_token: victim.ready.resume_token });
    expect((await thief.waitFor('error')).code).toBe('resume_failed');
    const owner = await start(sessionId, { resume_token: victim.ready.resume_token });
    expect(owner.ready.resume_token).toBeTruthy();

    // An expired token is an unknown one to the stash (its expiry: session/resume/resume.test.ts).
  });

  it('a clean close by the client leaves nothing to resume', async () => {
    const sessionId = sid('clean');
    const { client, ready } = await start(sessionId);
    client.close();
    await client.waitClose();
    const c = await WsTestClient.open(t.wsUrl);
    open.push(c);
    c.send({ type: 'start', ...textStart(sessionId), api_key: t.key, resume_token: ready.resume_token });
    expect((await c.waitFor('error')).code).toBe('resume_failed');
  });

  it('the heartbeat finds a peer that stopped answering pings, and the call is resumable', async () => {
    const sessionId = sid('hb');
    const ws = new WebSocket(t.wsUrl, { autoPong: false });
    await new Promise((r) => ws.once('open', r));
    const frames: { type: string; resume_token?: string }[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(String(d))));
    ws.send(JSON.stringify({ type: 'start', ...textStart(sessionId, { greeting: false }), api_key: t.key }));
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    const code = await closed;
    expect(code).toBe(1006);
    const token = frames.find((f) => f.type === 'ready')?.resume_token;
    expect(token).toBeTruthy();
    const again = await start(sessionId, { resume_token: token });
    expect(again.ready.type).toBe('ready');
  });

  it('a scoped key expiring ends the call; a fresh scoped key for the same session resumes it, the old one is refused', async () => {
    const sessionId = sid('exp');
    // A key's expiry is floored to the second: 2 s leaves it 1–2 s of life, 1 s could leave it none (a start refused).
    const shortKey = t.scopedKey(sessionId, { ttlS: 2 });
    const { client, ready } = await startSession(t.wsUrl, { ...textStart(sessionId, { greeting: false }), api_key: shortKey });
    open.push(client);
    const error = await client.waitFor('error', (f) => f.code === 'key_expired', 4000);
    expect(error.retryable).toBe(false);
    expect((await client.waitClose()).code).toBe(4403);

    const stale = await WsTestClient.open(t.wsUrl);
    open.push(stale);
    stale.send({ type: 'start', ...textStart(sessionId), api_key: shortKey, resume_token: ready.resume_token });
    expect((await stale.waitFor('error')).code).toBe('unauthorized');

    const again = await startSession(t.wsUrl, { ...textStart(sessionId), api_key: t.scopedKey(sessionId), resume_token: ready.resume_token });
    open.push(again.client);
    expect(again.ready.type).toBe('ready');
  });
});

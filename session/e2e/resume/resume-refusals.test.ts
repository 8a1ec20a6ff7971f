import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAlive, expectFatal, say, sid, textStart, WAIT_MS } from '../../../signaling/testing/conversation.ts';
import { startTestServer, type TestServer } from '../../../signaling/testing/test-server.ts';
import { startSession, WsTestClient } from '../../../signaling/testing/ws-test-client.ts';

/**
 * A resuming start is checked in full (capacity, tools, tool choice, voice, key) before its
 * token is spent, so a refusal — even a retryable one — never costs the conversation. These
 * refusals and the token's single use are decided by the connection (signaling/ws/open-session.ts)
 * and the stash, so they are tested over the socket; how the restored settings and the new mode
 * merge, and which tool choice that refuses: session/settings.test.ts.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ MAX_SESSIONS: '2', RESUME_TTL_S: '30' });
});
afterAll(async () => {
  await t.stop();
});

const lookup = { name: 'lookup', parameters: { type: 'object', properties: {} } };
const other = { name: 'other', parameters: { type: 'object', properties: {} } };

/** A conversation with one remembered fact, dropped abruptly: resolves with its resume token. */
async function droppedConversation(sessionId: string, mode: Record<string, unknown> = {}): Promise<string> {
  const { client, ready } = await startSession(t.wsUrl, { ...textStart(sessionId, { greeting: false, ...mode }), api_key: t.key });
  await say(client, 'my name is Grace');
  client.ws.terminate();
  await client.waitClose();
  await t.whenStashed(ready.resume_token);
  await t.whenSessions(0);
  return ready.resume_token;
}

async function resume(sessionId: string, token: string, mode: Record<string, unknown> = {}, key = t.key): Promise<WsTestClient> {
  const client = await WsTestClient.open(t.wsUrl);
  client.send({ type: 'start', ...textStart(sessionId, { greeting: false, ...mode }), api_key: key, resume_token: token });
  return client;
}

/** The token still resumes the whole conversation. */
async function expectResumes(sessionId: string, token: string): Promise<void> {
  const client = await resume(sessionId, token);
  await client.waitFor('ready');
  const reply = await say(client, 'what is my name?');
  expect(reply.deltas).toContain('Grace');
  client.close();
  await client.waitClose();
  await t.whenSessions(0);
  client.assertProtocol();
}

describe('a refused resume keeps its token', () => {
  it('server_busy (retryable): once a slot frees, the same token resumes', async () => {
    const sessionId = sid('busy');
    const token = await droppedConversation(sessionId);
    const occupants = [];
    for (let i = 0; i < 2; i += 1) occupants.push((await startSession(t.wsUrl, { ...textStart(sid(), { greeting: false }), api_key: t.key })).client);

    const refused = await resume(sessionId, token);
    await expectFatal(refused, 'server_busy', true, 1013);

    for (const occupant of occupants) occupant.close();
    await Promise.all(occupants.map((o) => o.waitClose()));
    await t.whenSessions(0);
    await expectResumes(sessionId, token);
  });

  it('invalid_tools from the restored tool choice and the new tools together: a corrected start resumes', async () => {
    const sessionId = sid('tools');
    const token = await droppedConversation(sessionId, { tools: [lookup], tool_choice: { allowed: ['lookup'] } });
    // The restored choice names `lookup`, which the new declarations drop.
    const refused = await resume(sessionId, token, { tools: [other] });
    const error = await expectFatal(refused, 'invalid_tools', false, 4400);
    expect(error.detail).toContain('lookup');
    await expectResumes(sessionId, token);
  });

  it('an unknown voice, a bad key, or another session id: each refused, the token still resumes afterwards', async () => {
    const sessionId = sid('misc');
    const token = await droppedConversation(sessionId);
    await expectFatal(await resume(sessionId, token, { voice: 'no-such-voice' }), 'invalid_start_frame', false, 4400);
    await expectFatal(await resume(sessionId, token, {}, 'ck_wrong'), 'unauthorized', false, 4401);
    const stranger = await WsTestClient.open(t.wsUrl);
    stranger.send({ type: 'start', ...textStart(sid(), { greeting: false }), api_key: t.key, resume_token: token });
    expect((await stranger.waitFor('error')).code).toBe('resume_failed');
    stranger.close();
    await expectResumes(sessionId, token);
  });

  it('two starts racing for one token: exactly one resumes, the other gets resume_failed', async () => {
    const sessionId = sid('race');
    const token = await droppedConversation(sessionId);
    const [a, b] = [await resume(sessionId, token), await resume(sessionId, token)];
    const outcomes = await Promise.all(
      [a, b].map((c) => Promise.race([c.waitFor('ready').then(() => 'ready'), c.waitFor('error').then((e) => e.code)])),
    );
    expect(outcomes.sort()).toEqual(['ready', 'resume_failed']);
    const winner = outcomes[0] === 'ready' ? a : b;
    await expectAlive(winner);
    a.close();
    b.close();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openText, say, sid, textStart, waitError } from '../../testing/conversation.ts';
import { scrape, type PromScrape } from '../../testing/prom-scrape.ts';
import { startTestServer, type TestServer } from '../../testing/test-server.ts';
import { startSession, WsTestClient } from '../../testing/ws-test-client.ts';

/**
 * The session counters against the real server: each event moves exactly its own series
 * (errors by code, resumes by outcome, tool calls by outcome, sessions by close code).
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

/** Runs `act`, then returns how each series moved. */
async function moved(act: () => Promise<void>): Promise<(name: string, labels?: Record<string, string>) => number> {
  const before = await scrape(t.url);
  await act();
  // Closes are counted when the server has seen them: once every session has left its registry.
  await t.whenSessions(0);
  const after: PromScrape = await scrape(t.url);
  return (name, labels = {}) => after.value(name, labels) - before.value(name, labels);
}

describe('session counters', () => {
  it('counts error frames by code, and sessions by transport, modality and close code', async () => {
    const delta = await moved(async () => {
      const { client } = await openText(t, { greeting: false });
      const after = client.frames.length;
      client.send('not json');
      await waitError(client, 'invalid_json', after);
      client.send({ type: 'set_voice', voice: 'no-such-voice' });
      await waitError(client, 'unknown_voice', after);
      const live = await scrape(t.url);
      expect(live.value('parley_sessions_active', { transport: 'websocket', modality: 'text' })).toBe(1);
      expect(live.value('parley_sessions_active')).toBe(1);
      client.close();
      const fatal = await WsTestClient.open(t.wsUrl);
      fatal.send({ type: 'start', ...textStart(sid()), api_key: 'ck_wrong' });
      await fatal.waitClose();
    });
    expect(delta('parley_errors_total', { code: 'invalid_json' })).toBe(1);
    expect(delta('parley_errors_total', { code: 'unknown_voice' })).toBe(1);
    expect(delta('parley_errors_total', { code: 'unauthorized' })).toBe(1);
    expect(delta('parley_errors_total')).toBe(3);
    // The refused start never became a session.
    expect(delta('parley_sessions_total')).toBe(1);
    expect(delta('parley_sessions_total', { close_code: '1000' })).toBe(1);
  });

  it('counts resumes by outcome: resumed, unknown token, another account\'s token', async () => {
    const delta = await moved(async () => {
      const sessionId = sid('rs');
      const first = await startSession(t.wsUrl, { ...textStart(sessionId, { greeting: false }), api_key: t.key });
      first.client.ws.terminate(); // a drop (1006): the conversation is stashed
      await first.client.waitClose();
      const foreign = await WsTestClient.open(t.wsUrl);
      foreign.send({ type: 'start', ...textStart(sessionId), api_key: t.scopedKey(sessionId, { account: 'other' }), resume_token: first.ready.resume_token });
      await waitError(foreign, 'resume_failed');
      foreign.close();
      const unknown = await WsTestClient.open(t.wsUrl);
      unknown.send({ type: 'start', ...textStart(sessionId), api_key: t.key, resume_token: 'rt_unknown' });
      await waitError(unknown, 'resume_failed');
      unknown.close();
      const again = await startSession(t.wsUrl, { ...textStart(sessionId), api_key: t.key, resume_token: first.ready.resume_token });
      again.client.close();
    });
    expect(delta('parley_resume_total', { outcome: 'resumed' })).toBe(1);
    expect(delta('parley_resume_total', { outcome: 'unknown' })).toBe(1);
    expect(delta('parley_resume_total', { outcome: 'refused' })).toBe(1);
    expect(delta('parley_sessions_total', { close_code: '1006' })).toBe(1);
  });

  it('counts tool calls by their final outcome', async () => {
    const delta = await moved(async () => {
      const { client } = await openText(t, { greeting: false, tools: [{ name: 'lookup', description: 'looks things up' }] });
      const after = client.frames.length;
      client.send({ type: 'input_text', text: 'please call lookup q=1' });
      const call = await client.waitFor('tool_call', () => true, 5000, after);
      client.send({ type: 'tool_result', id: call.id, content: { found: true }, outcome: 'succeeded', verified: true });
      const second = client.frames.length;
      client.send({ type: 'input_text', text: 'please call lookup q=2' });
      const failing = await client.waitFor('tool_call', () => true, 5000, second);
      client.send({ type: 'tool_result', id: failing.id, content: 'no', outcome: 'failed' });
      await say(client, 'hello');
      client.close();
    });
    expect(delta('parley_tool_calls_total', { outcome: 'succeeded' })).toBe(1);
    expect(delta('parley_tool_calls_total', { outcome: 'failed' })).toBe(1);
    expect(delta('parley_tool_calls_total')).toBe(2);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAlive, expectFatal, say, sid, textStart, WAIT_MS } from '../../testing/conversation.ts';
import { startTestServer, type TestServer } from '../../testing/test-server.ts';
import { startSession, WsTestClient } from '../../testing/ws-test-client.ts';

/**
 * Credit over the real server, at the default price (1 unit per session second): the ledger takes
 * each turn off the balance; an empty account cannot start or exchange keys; a top-up (as the CLI
 * makes it, straight into the store) counts at once, calling off a countdown and letting a
 * conversation closed for credit resume.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ CLOSING_NOTICE_S: '1', LOW_CREDIT_WARNING_S: '5' });
});
afterAll(() => t.stop());

const book = () => t.server.context.stores.accounts;
async function account(name: string, balance: number | null): Promise<string> {
  const { key } = await t.server.context.stores.keys.create(name);
  await book().setCredit(name, balance);
  return key;
}

describe('credit', () => {
  it('each turn is taken off the balance as it ends; an unlimited account has no balance to take from', async () => {
    const key = await account('metered', 1000);
    const { client } = await startSession(t.wsUrl, { ...textStart(sid(), { greeting: false }), api_key: key });
    const before = await book().credit('metered');
    const reply = await say(client, 'say hello');
    await t.server.context.usage.writer.flush();
    const after = await book().credit('metered');
    expect(before! - after!).toBeCloseTo(reply.done.usage.session_s, 6);
    expect(client.all('low_credit_warning')).toEqual([]);
    client.close();
    await client.waitClose(WAIT_MS);
    await t.server.context.usage.writer.flush();
    expect(await book().credit('acme')).toBeNull();
  });

  it('no credit: the start is refused (credit_exhausted, 4402) and so is a key exchange (402); a top-up counts at once', async () => {
    const key = await account('broke', 0);
    const client = await WsTestClient.open(t.wsUrl);
    client.send({ type: 'start', ...textStart(sid(), { greeting: false }), api_key: key });
    await expectFatal(client, 'credit_exhausted', false, 4402);
    const exchange = () =>
      fetch(`${t.url}/api/v1/session-keys`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ session_id: sid() }) });
    const refused = await exchange();
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ code: 'credit_exhausted', retryable: false });
    await book().addCredit('broke', 100);
    expect((await exchange()).status).toBe(201);
    const { client: again } = await startSession(t.wsUrl, { ...textStart(sid(), { greeting: false }), api_key: key });
    await expectAlive(again);
    again.close();
  });

  it('low credit warns once; a top-up during the countdown calls the close off and the session goes on', async () => {
    const key = await account('topped', 3);
    const { client } = await startSession(t.wsUrl, { ...textStart(sid(), { greeting: false }), api_key: key });
    const warning = await client.waitFor('low_credit_warning');
    expect(warning.seconds_left).toBeLessThanOrEqual(3);
    expect(warning.rate).toBe(1);
    const notice = await client.waitFor('session_closing_soon', (f) => f.reason === 'credit' && !f.cancelled, WAIT_MS);
    expect(notice.resumable).toBe(true);
    await book().addCredit('topped', 600);
    await client.waitFor('session_closing_soon', (f) => f.reason === 'credit' && f.cancelled === true, WAIT_MS);
    await new Promise((resolve) => setTimeout(resolve, notice.closes_in_ms + 500));
    expect(client.closed).toBeUndefined();
    await expectAlive(client);
    expect(client.all('low_credit_warning')).toHaveLength(1);
    client.assertProtocol();
    client.close();
  });

  it('closed for credit, the conversation resumes with its token once the account is topped up', async () => {
    const key = await account('resumer', 2);
    const sessionId = sid();
    const { client, ready } = await startSession(t.wsUrl, { ...textStart(sessionId, { greeting: false }), api_key: key });
    await say(client, 'my name is Ada');
    expect((await client.waitClose(WAIT_MS)).code).toBe(4402);
    expect(client.all('error').map((e) => [e.code, e.retryable])).toEqual([['credit_exhausted', false]]);
    // Still empty: refused, and the token is not spent.
    const early = await WsTestClient.open(t.wsUrl);
    early.send({ type: 'start', ...textStart(sessionId, { greeting: false }), api_key: key, resume_token: ready.resume_token });
    await expectFatal(early, 'credit_exhausted', false, 4402);
    await book().addCredit('resumer', 100);
    const resumed = await startSession(t.wsUrl, { ...textStart(sessionId, { greeting: false }), api_key: key, resume_token: ready.resume_token });
    const reply = await say(resumed.client, 'what is my name');
    expect(reply.utterance?.text).toContain('Ada');
    resumed.client.close();
  });
});

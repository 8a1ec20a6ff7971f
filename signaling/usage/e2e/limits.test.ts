import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAlive, expectFatal, sid, textStart, waitError, WAIT_MS } from '../../testing/conversation.ts';
import { startTestServer, type TestServer } from '../../testing/test-server.ts';
import { startSession, WsTestClient } from '../../testing/ws-test-client.ts';

/**
 * Every per-account limit at its edge and one past it, over the real server: WebSocket refusals
 * are rate_limited (retryable) with retry_after_ms and the limit's name, HTTP ones 429 with
 * Retry-After and the same JSON body. Each test has an account of its own; the defaults apply to
 * all, an account's override beats them.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ MAX_SESSIONS_PER_ACCOUNT: '2', SESSION_STARTS_PER_MINUTE: '4', KEY_EXCHANGES_PER_MINUTE: '3', INPUT_TEXT_PER_SECOND: '2' });
});
afterAll(() => t.stop());

const keyOf = async (account: string) => (await t.server.context.stores.keys.create(account)).key;
const start = (key: string) => ({ ...textStart(sid(), { greeting: false }), api_key: key });

async function exchange(key: string): Promise<Response> {
  return fetch(`${t.url}/api/v1/session-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ session_id: sid() }),
  });
}

async function refusedStart(key: string, limit: string): Promise<number> {
  const client = await WsTestClient.open(t.wsUrl);
  client.send({ type: 'start', ...start(key) });
  const error = await expectFatal(client, 'rate_limited', true, 4429);
  expect(error.limit).toBe(limit);
  client.assertProtocol();
  return error.retry_after_ms ?? -1;
}

describe('per-account limits', () => {
  it('KEY_EXCHANGES_PER_MINUTE: the third exchange passes, the fourth is 429 with Retry-After; another account is untouched', async () => {
    const key = (await keyOf('exchanges'));
    for (let i = 0; i < 3; i += 1) expect((await exchange(key)).status).toBe(201);
    const refused = await exchange(key);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(55);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const body = await refused.json();
    expect(body).toMatchObject({ code: 'rate_limited', retryable: true, limit: 'key_exchanges_per_minute' });
    expect(body.retry_after_ms).toBeGreaterThan(55_000);
    expect(typeof body.detail).toBe('string');
    expect((await exchange((await keyOf('exchanges-other')))).status).toBe(201);
  });

  it('MAX_SESSIONS_PER_ACCOUNT: two live sessions, the third refused; one ends, and a new one is accepted', async () => {
    const key = (await keyOf('concurrent'));
    const a = await startSession(t.wsUrl, start(key));
    const b = await startSession(t.wsUrl, start(key));
    expect(await refusedStart(key, 'max_sessions')).toBeGreaterThan(0);
    await expectAlive(a.client);
    a.client.close();
    await a.client.waitClose(WAIT_MS);
    const c = await startSession(t.wsUrl, start(key));
    await expectAlive(c.client);
    b.client.close();
    c.client.close();
  });

  it('SESSION_STARTS_PER_MINUTE: four starts pass, the fifth is refused until the minute is over', async () => {
    const key = (await keyOf('starts'));
    for (let i = 0; i < 4; i += 1) {
      const { client } = await startSession(t.wsUrl, start(key));
      client.close();
      await client.waitClose(WAIT_MS);
    }
    const wait = await refusedStart(key, 'session_starts_per_minute');
    expect(wait).toBeGreaterThan(50_000);
    expect(wait).toBeLessThanOrEqual(60_000);
  });

  it('INPUT_TEXT_PER_SECOND: two in a second are answered, the third is refused and the session goes on, in order', async () => {
    const key = (await keyOf('typing'));
    const { client } = await startSession(t.wsUrl, start(key));
    for (const text of ['say one', 'say two', 'say three']) client.send({ type: 'input_text', text });
    client.send({ type: 'set_voice', voice: 'rms' });
    const error = await waitError(client, 'rate_limited');
    expect(error).toMatchObject({ retryable: true, limit: 'input_text_per_second' });
    expect(error.retry_after_ms).toBeGreaterThan(0);
    expect(error.retry_after_ms).toBeLessThanOrEqual(1000);
    await client.waitFor('voice');
    // Refused, not queued: only the first two became turns; the voice change came after the refusal.
    const order = client.frames.filter((f) => f.type === 'asr' || f.type === 'error' || f.type === 'voice').map((f) => (f.type === 'asr' ? f.text : f.type));
    expect(order).toEqual(['say one', 'say two', 'error', 'voice']);
    await new Promise((resolve) => setTimeout(resolve, error.retry_after_ms));
    await expectAlive(client, 'say four');
    expect(client.closed).toBeUndefined();
    client.assertProtocol();
    client.close();
  });

  it('an account override beats the default: 0 lifts a limit, a number sets its own', async () => {
    const key = (await keyOf('override'));
    await t.server.context.stores.accounts.setLimits('override', { max_sessions: 0, input_text_per_second: 1 });
    const sessions = [];
    for (let i = 0; i < 3; i += 1) sessions.push(await startSession(t.wsUrl, start(key)));
    const { client } = sessions[0]!;
    client.send({ type: 'input_text', text: 'say one' });
    client.send({ type: 'input_text', text: 'say two' });
    expect(await waitError(client, 'rate_limited')).toMatchObject({ limit: 'input_text_per_second' });
    for (const s of sessions) s.client.close();
  });
});

describe('no limit set (the default deployment)', () => {
  let open: TestServer;
  beforeAll(async () => {
    open = await startTestServer();
  });
  afterAll(() => open.stop());

  it('accepts every exchange, session and input_text as before', async () => {
    const exchanges = await Promise.all(
      Array.from({ length: 8 }, () =>
        fetch(`${open.url}/api/v1/session-keys`, { method: 'POST', headers: { authorization: `Bearer ${open.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ session_id: sid() }) }),
      ),
    );
    expect(exchanges.map((r) => r.status)).toEqual(Array(8).fill(201));
    const sessions = await Promise.all(Array.from({ length: 5 }, () => startSession(open.wsUrl, { ...textStart(sid(), { greeting: false }), api_key: open.key })));
    const { client } = sessions[0]!;
    for (let i = 0; i < 6; i += 1) client.send({ type: 'input_text', text: `say n${i}` });
    await client.waitFor('asr', (f) => f.text === 'say n5');
    expect(client.all('error')).toEqual([]);
    for (const s of sessions) s.client.close();
  });
});

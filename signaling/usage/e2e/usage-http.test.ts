import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METERS } from '../../../session/protocol/usage.ts';
import { say, sid, textStart, WAIT_MS } from '../../testing/conversation.ts';
import { startTestServer, type TestServer } from '../../testing/test-server.ts';
import { startSession, WsTestClient } from '../../testing/ws-test-client.ts';

/**
 * GET /api/v1/usage and GET /api/v1/feedback over HTTP: an account sees its own records and
 * never another's; the ledger agrees with the usage the done frames carried; bad queries are 400
 * naming the parameter; only a persistent key may ask.
 */

let t: TestServer;
let beta: string;
beforeAll(async () => {
  t = await startTestServer();
  beta = (await t.server.context.stores.keys.create('beta')).key;
});
afterAll(() => t.stop());

/** `key` '' sends no Authorization header. */
async function get(path: string, key = t.key): Promise<{ status: number; body: any }> {
  const response = await fetch(`${t.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: response.status, body: await response.json() };
}

/** A text conversation of `turns` replies, closed cleanly; resolves with the done frames' usage summed. */
async function converse(key: string, sessionId: string, turns: number): Promise<Record<string, number>> {
  const { client } = await startSession(t.wsUrl, { ...textStart(sessionId, { greeting: false }), api_key: key });
  for (let i = 0; i < turns; i += 1) await say(client, `say hello number ${i}`);
  client.close();
  await client.waitClose(WAIT_MS);
  client.assertProtocol();
  const sum: Record<string, number> = {};
  for (const done of client.all('done')) for (const meter of METERS) sum[meter] = (sum[meter] ?? 0) + done.usage[meter];
  return sum;
}

async function flushed(): Promise<void> {
  await t.server.context.usage.writer.flush();
}

describe('GET /api/v1/usage', () => {
  it('totals and sessions of the key’s account only, agreeing with the done frames', async () => {
    const mine = sid('mine');
    const wire = await converse(t.key, mine, 3);
    await converse(beta, sid('theirs'), 2);
    await flushed();
    const { status, body } = await get(`/api/v1/usage?session_id=${mine}`);
    expect(status).toBe(200);
    expect(body.account).toBe('acme');
    expect(body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([mine]);
    const [session] = body.sessions;
    expect(session.turns).toBe(3);
    // Tokens and calls per turn agree exactly; wall time adds the last interval closed at the end.
    for (const meter of ['llm_input_tokens', 'llm_output_tokens', 'tool_calls', 'tts_chars', 'audio_out_s']) expect(session[meter]).toBe(wire[meter]);
    expect(session.llm_tokens_estimated).toBe(true);
    expect(session.session_s).toBeGreaterThanOrEqual(wire.session_s!);
    expect(session.units).toBeCloseTo(session.session_s, 3);
    expect(body.days).toHaveLength(1);

    const everything = await get('/api/v1/usage');
    const ids = everything.body.sessions.map((s: { session_id: string }) => s.session_id);
    expect(ids).toContain(mine);
    expect(ids.some((id: string) => id.startsWith('theirs'))).toBe(false);
    const theirs = await get('/api/v1/usage', beta);
    expect(theirs.body.sessions.map((s: { session_id: string }) => s.session_id).some((id: string) => id.startsWith('mine'))).toBe(false);
    expect(theirs.body.sessions).toHaveLength(1);
    // Another account's session id, asked for by name, is simply not there.
    expect((await get(`/api/v1/usage?session_id=${mine}`, beta)).body).toMatchObject({ sessions: [], totals: { session_s: 0 } });
  });

  it('from and to bound the rows: a date alone is a whole UTC day, a time is exact', async () => {
    await converse(t.key, sid('ranged'), 1);
    await flushed();
    const today = new Date().toISOString().slice(0, 10);
    const inDay = await get(`/api/v1/usage?from=${today}&to=${today}`);
    expect(inDay.status).toBe(200);
    expect(inDay.body.from).toBe(`${today}T00:00:00.000Z`);
    expect(inDay.body.sessions.length).toBeGreaterThan(0);
    const future = await get(`/api/v1/usage?from=2999-01-01T00:00:00Z`);
    expect(future.body).toMatchObject({ sessions: [], days: [], totals: { units: 0 } });
    const past = await get(`/api/v1/usage?to=2000-01-01T00:00:00%2B02:00`);
    expect(past.body.to).toBe('1999-12-31T22:00:00.000Z');
    expect(past.body.sessions).toEqual([]);
  });

  it.each([
    ['from=yesterday', 'from'],
    ['to=2026-13-45', 'to'],
    ['from=2026-03-02&to=2026-03-01T00:00:00Z', 'to'],
    ['session_id=has%20space', 'session_id'],
    ['sessions=1', 'sessions'],
    ['from=2026-03-01&from=2026-03-02', 'from'],
    ['from=2026-03-01T10:00', 'from'],
  ])('400 naming the parameter for %s', async (query, parameter) => {
    const { status, body } = await get(`/api/v1/usage?${query}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'invalid_parameter', retryable: false, parameter });
    expect(body.detail).toContain(parameter);
  });

  it('401 without a key, with an unknown one, and with a scoped key', async () => {
    expect((await get('/api/v1/usage', '')).status).toBe(401);
    expect((await get('/api/v1/usage', 'ck_nope')).body).toMatchObject({ code: 'unauthorized' });
    expect((await get('/api/v1/usage', t.scopedKey('s1'))).status).toBe(401);
    expect((await get('/api/v1/feedback', t.scopedKey('s1'))).status).toBe(401);
  });
});

describe('GET /api/v1/feedback', () => {
  async function report(frame: Record<string, unknown>): Promise<void> {
    const client = await WsTestClient.open(t.wsUrl);
    client.send(frame);
    await client.waitClose(WAIT_MS);
    expect(client.all('error')).toEqual([]);
  }

  it('lists the account’s stored feedback and client-error reports, newest first, never another’s', async () => {
    const session = sid('rated');
    await report({ type: 'feedback', session_id: session, rating: 5, text: 'lovely', api_key: t.key });
    await report({ type: 'client_error', session_id: session, detail: 'mic failed', api_key: t.key });
    await report({ type: 'feedback', session_id: sid('other'), rating: 'down', text: 'not mine', api_key: beta });
    const { status, body } = await get(`/api/v1/feedback?session_id=${session}`);
    expect(status).toBe(200);
    expect(body.reports.map((r: { kind: string }) => r.kind)).toEqual(['client_error', 'feedback']);
    expect(body.reports[1]).toMatchObject({ kind: 'feedback', session_id: session, rating: 5, text: 'lovely' });
    expect(body.reports[1].id).toMatch(/^fb_/);
    expect(JSON.stringify(body)).not.toContain('ck_');
    const all = await get('/api/v1/feedback');
    expect(all.body.reports.some((r: { text?: string }) => r.text === 'not mine')).toBe(false);
    expect((await get('/api/v1/feedback?kind=feedback&limit=1')).body).toMatchObject({ truncated: false, reports: [{ kind: 'feedback', text: 'lovely' }] });
    const theirs = await get('/api/v1/feedback', beta);
    expect(theirs.body.reports.map((r: { text?: string }) => r.text)).toEqual(['not mine']);
  });

  it.each([
    ['kind=praise', 'kind'],
    ['limit=0', 'limit'],
    ['limit=5000', 'limit'],
    ['to=soon', 'to'],
  ])('400 naming the parameter for %s', async (query, parameter) => {
    const { status, body } = await get(`/api/v1/feedback?${query}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'invalid_parameter', parameter });
  });
});

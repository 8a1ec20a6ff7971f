import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAlive, expectStartRejected, sid, textStart } from '../testing/conversation.ts';
import { rawExchange } from '../testing/raw-http.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { startSession } from '../testing/ws-test-client.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

const ENDPOINT = '/api/v1/session-keys';

async function post(
  body: unknown,
  opts: { key?: string | null; contentType?: string | null; raw?: string; method?: string } = {},
): Promise<{ status: number; body: any; contentType: string | null }> {
  const headers: Record<string, string> = {};
  const key = opts.key === undefined ? t.key : opts.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const contentType = opts.contentType === undefined ? 'application/json' : opts.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  const res = await fetch(`${t.url}${ENDPOINT}`, {
    method: opts.method ?? 'POST',
    headers,
    body: opts.raw ?? JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // left as text; the assertion on it will say so
  }
  return { status: res.status, body: parsed, contentType: res.headers.get('content-type') };
}

function expectErrorBody(body: unknown, code: string): void {
  expect(body).toEqual({ code, detail: expect.any(String), retryable: false });
  expect((body as { detail: string }).detail.length).toBeGreaterThan(0);
}

describe('POST /api/v1/session-keys success', () => {
  it('answers 201 with exactly {api_key, session_id, expires_in: 7800}', async () => {
    const sessionId = sid('mint');
    const res = await post({ session_id: sessionId });
    expect(res.status).toBe(201);
    expect(res.contentType).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['api_key', 'expires_in', 'session_id']);
    expect(res.body).toEqual({ api_key: expect.any(String), session_id: sessionId, expires_in: 7800 });
    expect(res.body.api_key).not.toBe(t.key);
    expect(res.body.api_key.length).toBeGreaterThan(0);
  });

  it('accepts every boundary-valid session id', async () => {
    for (const sessionId of ['a', 'A'.repeat(64), '_x', '-x', '9.x', 'a.b-c_d']) {
      const res = await post({ session_id: sessionId });
      expect(res.status, sessionId).toBe(201);
      expect(res.body.session_id).toBe(sessionId);
    }
  });

  it('mints a key that opens a session with its session_id', async () => {
    const sessionId = sid('mint');
    const { body } = await post({ session_id: sessionId });
    const { client, ready } = await startSession(t.wsUrl, { ...textStart(sessionId), api_key: body.api_key });
    expect(typeof ready.resume_token).toBe('string');
    await expectAlive(client);
    client.close();
    client.assertProtocol();
  });

  it('mints a key that can be reused for sequential connections with its session_id', async () => {
    const sessionId = sid('reuse');
    const { body } = await post({ session_id: sessionId });
    for (let i = 0; i < 2; i += 1) {
      const { client } = await startSession(t.wsUrl, textStart(sessionId, { greeting: false }), { authorization: `Bearer ${body.api_key}` });
      client.close();
      await client.waitClose();
      client.assertProtocol();
    }
  });

  it('mints a key that is refused for another session_id', async () => {
    const { body } = await post({ session_id: sid('bound') });
    await expectStartRejected(t.wsUrl, { ...textStart(sid('other')), api_key: body.api_key }, 'unauthorized', 4401);
  });
});

describe('POST /api/v1/session-keys 400', () => {
  const bad: Array<[string, unknown]> = [
    ['missing session_id', {}],
    ['empty', { session_id: '' }],
    ['65 characters', { session_id: 'a'.repeat(65) }],
    ['leading period', { session_id: '.abc' }],
    ['space inside', { session_id: 'a b' }],
    ['slash', { session_id: 'a/b' }],
    ['non-ASCII', { session_id: 'sessión' }],
    ['number', { session_id: 42 }],
    ['null', { session_id: null }],
    ['array body', [{ session_id: 'abc' }]],
    ['string body', 'abc'],
    ['null body', null],
  ];
  it.each(bad)('%s → 400 invalid_session_id', async (_label, body) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expectErrorBody(res.body, 'invalid_session_id');
  });
});

describe('POST /api/v1/session-keys 401', () => {
  it('missing Authorization header', async () => {
    const res = await post({ session_id: 'abc' }, { key: null });
    expect(res.status).toBe(401);
    expectErrorBody(res.body, 'unauthorized');
  });

  it('Authorization without the Bearer scheme', async () => {
    const res = await fetch(`${t.url}${ENDPOINT}`, {
      method: 'POST',
      headers: { authorization: `Basic ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'abc' }),
    });
    expect(res.status).toBe(401);
    expectErrorBody(await res.json(), 'unauthorized');
  });

  it('unknown keys, well-formed or not', async () => {
    for (const key of [`ck_${'A'.repeat(43)}`, 'ck_short', 'nonsense', `${t.key}x`]) {
      const res = await post({ session_id: 'abc' }, { key });
      expect(res.status, key).toBe(401);
      expectErrorBody(res.body, 'unauthorized');
    }
  });

  it('a scoped key used as the bearer', async () => {
    const sessionId = sid('scoped');
    const minted = await post({ session_id: sessionId });
    expect(minted.status).toBe(201);
    for (const scoped of [minted.body.api_key as string, t.scopedKey(sessionId)]) {
      const res = await post({ session_id: sessionId }, { key: scoped });
      expect(res.status).toBe(401);
      expectErrorBody(res.body, 'unauthorized');
    }
  });

  it('is checked before the body: no key and a bad body is still 401', async () => {
    const res = await post(undefined, { key: null, contentType: 'text/plain', raw: 'not json' });
    expect(res.status).toBe(401);
    expectErrorBody(res.body, 'unauthorized');
  });

  it('a revoked persistent key stops new exchanges, but a scoped key issued before still works on /ws (SPEC rule 3)', async () => {
    const created = await t.server.context.stores.keys.create('acme');
    const sessionId = sid('revoke');
    const before = await post({ session_id: sessionId }, { key: created.key });
    expect(before.status).toBe(201);

    expect(await t.server.context.stores.keys.revoke(created.id)).toBe('revoked');

    const after = await post({ session_id: sessionId }, { key: created.key });
    expect(after.status).toBe(401);
    expectErrorBody(after.body, 'unauthorized');

    // The scoped key outlives its parent's revocation, by start frame and by header.
    const byFrame = await startSession(t.wsUrl, { ...textStart(sessionId), api_key: before.body.api_key });
    await expectAlive(byFrame.client);
    byFrame.client.close();
    await byFrame.client.waitClose();
    byFrame.client.assertProtocol();
    const byHeader = await startSession(t.wsUrl, textStart(sessionId), { authorization: `Bearer ${before.body.api_key}` });
    await expectAlive(byHeader.client);
    byHeader.client.close();
    byHeader.client.assertProtocol();

    // The revoked persistent key itself no longer opens sessions.
    await expectStartRejected(t.wsUrl, { ...textStart(sid()), api_key: created.key }, 'unauthorized', 4401);
  });
});

describe('POST /api/v1/session-keys 415', () => {
  it.each([
    ['text/plain', 'text/plain', JSON.stringify({ session_id: 'abc' })],
    ['form encoded', 'application/x-www-form-urlencoded', 'session_id=abc'],
    ['no content type', null, JSON.stringify({ session_id: 'abc' })],
  ])('%s → 415 not_json', async (_label, contentType, raw) => {
    const res = await post(undefined, { contentType, raw });
    expect(res.status).toBe(415);
    expectErrorBody(res.body, 'not_json');
  });

  it.each([
    ['truncated object', '{"session_id": "abc"'],
    ['bare word', 'hello'],
    ['empty body', ''],
  ])('malformed JSON body (%s) → 415 not_json', async (_label, raw) => {
    const res = await post(undefined, { raw });
    expect(res.status).toBe(415);
    expectErrorBody(res.body, 'not_json');
  });

  it('accepts application/json with a charset parameter', async () => {
    const res = await post({ session_id: 'charset-ok' }, { contentType: 'application/json; charset=utf-8' });
    expect(res.status).toBe(201);
  });
});

describe('HTTP errors outside the endpoint', () => {
  it('GET on the session-keys path → 405 JSON error', async () => {
    const res = await fetch(`${t.url}${ENDPOINT}`, { headers: { authorization: `Bearer ${t.key}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expectErrorBody(await res.json(), 'method_not_allowed');
  });

  it('an unknown path → 404 JSON error', async () => {
    for (const path of ['/nope', '/api/v1/nope', '/api/v2/session-keys']) {
      const res = await fetch(`${t.url}${path}`, { method: path === '/nope' ? 'GET' : 'POST' });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
      expectErrorBody(await res.json(), 'not_found');
    }
  });

  it('an oversized body → 413 JSON error', async () => {
    const res = await post({ session_id: 'abc', pad: 'x'.repeat(20_000) });
    expect(res.status).toBe(413);
    expectErrorBody(res.body, 'payload_too_large');
  });
});

describe('POST /dev/session-key (dev only)', () => {
  it('is mounted on a loopback HOST and mints a working key for the dev account', async () => {
    const sessionId = sid('dev');
    const res = await fetch(`${t.url}/dev/session-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: sessionId }),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { api_key: string; session_id: string; expires_in: number };
    expect(body).toEqual({ api_key: expect.any(String), session_id: sessionId, expires_in: 7800 });
    const { client } = await startSession(t.wsUrl, { ...textStart(sessionId), api_key: body.api_key });
    client.close();
    client.assertProtocol();
  });

  const devRequest = (headers: Record<string, string>): string => {
    const body = JSON.stringify({ session_id: 'dev-1' });
    const lines = ['POST /dev/session-key HTTP/1.1', 'Content-Type: application/json', `Content-Length: ${body.length}`, 'Connection: close'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    return `${lines.join('\r\n')}\r\n\r\n${body}`;
  };

  it.each([
    ['a DNS-rebinding page (Host names another host)', { Host: 'evil.example:8080' }],
    ['a cross-site page (Origin elsewhere)', { Host: '127.0.0.1', Origin: 'https://evil.example' }],
    ['an Origin that is no origin', { Host: 'localhost', Origin: 'null' }],
    ['a same-host reverse proxy (X-Forwarded-For)', { Host: '127.0.0.1', 'X-Forwarded-For': '203.0.113.9' }],
    ['a same-host reverse proxy (Forwarded)', { Host: '127.0.0.1', Forwarded: 'for=203.0.113.9' }],
  ])('refuses %s with 403 forbidden_origin, minting nothing', async (_what, headers) => {
    const answer = await rawExchange(t.server.port, devRequest(headers));
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer).toContain('"code":"forbidden_origin"');
    expect(answer).not.toContain('api_key');
  });

  it.each([
    ['Host 127.0.0.1 with a port, no Origin', { Host: '127.0.0.1:8080' }],
    ['Host localhost, Origin a localhost page', { Host: 'localhost:8080', Origin: 'http://localhost:8080' }],
    ['Host [::1], Origin an [::1] page', { Host: '[::1]:8080', Origin: 'http://[::1]:8080' }],
  ])('answers a page on this machine: %s', async (_what, headers) => {
    const answer = await rawExchange(t.server.port, devRequest(headers));
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
  });

  it('is off when DEV_ROUTES is not set', async () => {
    const off = await startTestServer({ DEV_ROUTES: '' });
    try {
      const res = await fetch(`${off.url}/dev/session-key`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session_id: 'abc' }) });
      expect(res.status).toBe(404);
    } finally {
      await off.stop();
    }
  });

  it('is absent with DEV_ROUTES=off', async () => {
    const off = await startTestServer({ DEV_ROUTES: 'off' });
    try {
      const res = await fetch(`${off.url}/dev/session-key`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session_id: 'abc' }),
      });
      expect(res.status).toBe(404);
    } finally {
      await off.stop();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openSqlDatabase } from '../stores/sql/sql-database.ts';
import { SqlKeyStore } from '../stores/sql/sql-key-store.ts';
import { expectAlive, expectFatal, expectStartRejected, sid, textStart, WAIT_MS } from '../testing/conversation.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { startSession, WsTestClient } from '../testing/ws-test-client.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

async function expectOpens(start: Record<string, unknown>, headers: Record<string, string> = {}): Promise<void> {
  const { client, ready } = await startSession(t.wsUrl, start, headers);
  expect(ready.type).toBe('ready');
  await expectAlive(client);
  client.close();
  await client.waitClose();
  client.assertProtocol();
}

async function expectHandshakeRefused(headers: Record<string, string>): Promise<void> {
  await expect(WsTestClient.open(t.wsUrl, headers)).rejects.toThrow(/handshake refused: 401/);
}

describe('WebSocket authentication: handshake header', () => {
  it('a valid persistent key in Authorization: Bearer works without api_key', async () => {
    await expectOpens(textStart(sid()), bearer(t.key));
  });

  it('a scoped key in Authorization: Bearer works for its session_id', async () => {
    const sessionId = sid();
    await expectOpens(textStart(sessionId), bearer(t.scopedKey(sessionId)));
  });

  it('a bad bearer is refused at the handshake with HTTP 401', async () => {
    await expectHandshakeRefused(bearer('nonsense'));
    await expectHandshakeRefused(bearer(`ck_${'B'.repeat(43)}`));
    await expectHandshakeRefused(bearer(`${t.scopedKey('abc')}x`));
    await expectHandshakeRefused({ authorization: 'Bearer' });
    await expectHandshakeRefused({ authorization: `Basic ${t.key}` });
  });

  it('the 401 handshake refusal carries a JSON error body', async () => {
    // A plain HTTP upgrade request, so the refusal's body can be read.
    const { request } = await import('node:http');
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${t.url}/ws`, {
        headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', authorization: 'Bearer nope' },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('upgrade', () => reject(new Error('upgraded with a bad key')));
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({ code: 'unauthorized', detail: expect.any(String), retryable: false });
  });

  it('a handshake to a path other than /ws is refused with 404', async () => {
    await expect(WsTestClient.open(`${t.url.replace(/^http/, 'ws')}/other`, bearer(t.key))).rejects.toThrow(/handshake refused: 404/);
  });
});

describe('WebSocket authentication: start frame api_key', () => {
  it('api_key in the start frame works (persistent key)', async () => {
    await expectOpens({ ...textStart(sid()), api_key: t.key });
  });

  it('api_key in the start frame works (scoped key for its session_id)', async () => {
    const sessionId = sid();
    await expectOpens({ ...textStart(sessionId), api_key: t.scopedKey(sessionId) });
  });

  it('no key at all → error unauthorized, close 4401', async () => {
    const error = await expectStartRejected(t.wsUrl, textStart(sid()), 'unauthorized', 4401);
    expect(error.retryable).toBe(false);
  });

  it('an unknown key in the start frame → unauthorized, close 4401', async () => {
    await expectStartRejected(t.wsUrl, { ...textStart(sid()), api_key: `ck_${'C'.repeat(43)}` }, 'unauthorized', 4401);
    await expectStartRejected(t.wsUrl, { ...textStart(sid()), api_key: 'garbage' }, 'unauthorized', 4401);
  });

  it('a scoped key with another session_id → unauthorized (start frame and header)', async () => {
    const other = t.scopedKey(sid('bound'));
    await expectStartRejected(t.wsUrl, { ...textStart(sid()), api_key: other }, 'unauthorized', 4401);
    await expectStartRejected(t.wsUrl, textStart(sid()), 'unauthorized', 4401, bearer(other));
  });

  it('an expired scoped key → unauthorized', async () => {
    const sessionId = sid('expired');
    // Minted 2 s ago with a 1 s lifetime.
    const key = t.scopedKey(sessionId, { ttlS: 1, mintedAt: Date.now() - 2000 });
    await expectStartRejected(t.wsUrl, { ...textStart(sessionId), api_key: key }, 'unauthorized', 4401);
    await expectHandshakeRefused(bearer(key));
  });
});

describe('WebSocket authentication: header and start frame both present', () => {
  it('different keys → unauthorized, close 4401', async () => {
    const sessionId = sid();
    await expectStartRejected(t.wsUrl, { ...textStart(sessionId), api_key: t.scopedKey(sessionId) }, 'unauthorized', 4401, bearer(t.key));
  });

  it('the same key in both places → ok', async () => {
    await expectOpens({ ...textStart(sid()), api_key: t.key }, bearer(t.key));
  });
});

describe('WebSocket authentication: scoped key expiry on a live connection', () => {
  it('a live session on a scoped key gets key_expired and close 4403 when the key expires', async () => {
    const sessionId = sid('live');
    const { client } = await startSession(t.wsUrl, { ...textStart(sessionId, { greeting: false }), api_key: t.scopedKey(sessionId, { ttlS: 2 }) });
    await expectAlive(client);
    const closed = await client.waitClose(WAIT_MS);
    expect(closed.code).toBe(4403);
    const errors = client.all('error');
    expect(errors.map((e) => e.code)).toEqual(['key_expired']);
    expect(errors[0]?.retryable).toBe(false);
    client.assertProtocol();
  });

  it('the same holds when the scoped key came in the Authorization header', async () => {
    const sessionId = sid('live-header');
    const { client } = await startSession(t.wsUrl, textStart(sessionId, { greeting: false }), bearer(t.scopedKey(sessionId, { ttlS: 2 })));
    await expectAlive(client);
    const closed = await client.waitClose(WAIT_MS);
    expect(closed.code).toBe(4403);
    expect(client.all('error').map((e) => [e.code, e.retryable])).toEqual([['key_expired', false]]);
    client.assertProtocol();
  });

  it('a live session on a persistent key is not ended by time', async () => {
    // The server's timers run on a fake clock from before the session starts (the sockets stay
    // real): were an expiry armed, the 2.1 simulated seconds would fire it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    let client: WsTestClient;
    try {
      ({ client } = await startSession(t.wsUrl, { ...textStart(sid(), { greeting: false }), api_key: t.key }));
      await vi.advanceTimersByTimeAsync(2100);
    } finally {
      vi.useRealTimers();
    }
    await expectAlive(client);
    expect(client.closed).toBeUndefined();
    expect(client.all('error')).toEqual([]);
    client.close();
    client.assertProtocol();
  });
});

describe('WebSocket authentication: keys managed while the server runs', () => {
  it('a key created by the CLI-level KeyStore after start works; revoking it refuses the next connection', async () => {
    // A second store on the same data directory, as `npm run keys` opens it.
    const database = openSqlDatabase({ DATA_DIR: t.dataDir });
    try {
      const cli = new SqlKeyStore(database);
      const created = await cli.create('beta');
      await expectOpens({ ...textStart(sid()), api_key: created.key });
      await expectOpens(textStart(sid()), bearer(created.key));

      expect(await cli.revoke(created.id)).toBe('revoked');
      await expectStartRejected(t.wsUrl, { ...textStart(sid()), api_key: created.key }, 'unauthorized', 4401);
      await expectHandshakeRefused(bearer(created.key));
    } finally {
      await database.close();
    }
  });

  it('a key created through the server\'s own key store after start works; revoked → refused', async () => {
    const created = await t.server.context.stores.keys.create('gamma');
    await expectOpens({ ...textStart(sid()), api_key: created.key });
    await t.server.context.stores.keys.revoke(created.id);
    await expectStartRejected(t.wsUrl, { ...textStart(sid()), api_key: created.key }, 'unauthorized', 4401);
  });

  it('a key revoked between handshake and start frame is refused at start', async () => {
    const created = await t.server.context.stores.keys.create('delta');
    const client = await WsTestClient.open(t.wsUrl, bearer(created.key));
    await t.server.context.stores.keys.revoke(created.id);
    client.send({ type: 'start', ...textStart(sid()) });
    await expectFatal(client, 'unauthorized', false, 4401);
    client.assertProtocol();
  });
});

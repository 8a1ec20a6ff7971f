import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectAlive, expectFatal, openText, sid, textStart, WAIT_MS } from '../testing/conversation.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { WsTestClient } from '../testing/ws-test-client.ts';

describe('MAX_SESSIONS → server_busy', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ MAX_SESSIONS: '1' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('a second session gets error server_busy (retryable) and close 1013; after the first closes a new one is accepted', async () => {
    const first = await openText(t, { greeting: false });

    const second = await WsTestClient.open(t.wsUrl);
    second.send({ type: 'start', ...textStart(sid()), api_key: t.key });
    await expectFatal(second, 'server_busy', true, 1013);
    second.assertProtocol();

    // The first session is untouched by the refusal.
    await expectAlive(first.client);
    first.client.close();
    await first.client.waitClose();
    await t.whenSessions(0);

    const third = await openText(t, { greeting: false });
    await expectAlive(third.client);
    third.client.close();
    await third.client.waitClose();
    first.client.assertProtocol();
    third.client.assertProtocol();
    await t.whenSessions(0);
  });

  it('sockets that have not started, or were refused, do not take the slot', async () => {
    const idle = await WsTestClient.open(t.wsUrl);
    const refused = await WsTestClient.open(t.wsUrl);
    refused.send({ type: 'start', ...textStart(sid()) }); // no key
    await expectFatal(refused, 'unauthorized', false, 4401);

    const session = await openText(t, { greeting: false });
    await expectAlive(session.client);
    session.client.close();
    idle.close();
    await session.client.waitClose();
    await t.whenSessions(0);
    session.client.assertProtocol();
  });

  it('a session that ends abruptly (socket terminated) releases its slot', async () => {
    const first = await openText(t, { greeting: false });
    first.client.ws.terminate();
    await t.whenSessions(0);
    const next = await openText(t, { greeting: false });
    await expectAlive(next.client);
    next.client.close();
    await next.client.waitClose();
    await t.whenSessions(0);
  });
});

describe('START_TIMEOUT_MS → start_timeout', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ START_TIMEOUT_MS: '300' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('a socket that never sends start gets error start_timeout and close 4408', async () => {
    const client = await WsTestClient.open(t.wsUrl, { authorization: `Bearer ${t.key}` });
    const closed = await client.waitClose(WAIT_MS);
    expect(closed.code).toBe(4408);
    const errors = client.all('error');
    expect(errors.map((e) => e.code)).toEqual(['start_timeout']);
    expect(typeof errors[0]?.retryable).toBe('boolean');
    client.assertProtocol();
  });

  it('a start in time cancels the timer: the session outlives the start timeout', async () => {
    // The server's timers run on a fake clock from before the socket opens (the socket stays
    // real): a start timer left armed would fire in the 700 simulated milliseconds.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    let client: WsTestClient;
    try {
      ({ client } = await openText(t, { greeting: false }));
      await vi.advanceTimersByTimeAsync(700);
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

describe('heartbeat', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ HEARTBEAT_INTERVAL_MS: '100' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('a peer that answers pings stays connected across many heartbeats', async () => {
    const { client } = await openText(t, { greeting: false });
    await new Promise<void>((resolve) => {
      let pings = 0;
      client.ws.on('ping', () => (pings += 1) === 6 && resolve());
    });
    await expectAlive(client);
    expect(client.closed).toBeUndefined();
    client.close();
    client.assertProtocol();
  });

  it('a peer that stops answering pings is terminated and its slot released', async () => {
    const ws = new WebSocket(t.wsUrl, { autoPong: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.send(JSON.stringify({ type: 'start', ...textStart(sid(), { greeting: false }), api_key: t.key }));
    await t.whenSessions(1);
    // The server terminates it: no close frame reaches the client (1006).
    expect(await closed).toBe(1006);
    await t.whenSessions(0);
  });
});

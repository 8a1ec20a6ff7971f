import { afterEach, describe, expect, it, vi } from 'vitest';
import { spawnServer as spawnChild, type ChildServer } from './testing/child-server.ts';
import { expectAlive, expectFatal, longSay, sid, textStart, WAIT_MS } from './testing/conversation.ts';
import { startTestServer } from './testing/test-server.ts';
import { startSession, WsTestClient } from './testing/ws-test-client.ts';

/**
 * SIGTERM drain of the real `npm start` entry point, run as a child process: live sessions are
 * told server_restarting and closed with 1012, new connections are refused, the process exits 0.
 */

let children: ChildServer[] = [];
afterEach(() => {
  for (const child of children) child.kill();
  children = [];
});

async function spawnServer(env: Record<string, string> = {}): Promise<ChildServer> {
  const child = await spawnChild(env);
  children.push(child);
  return child;
}

/** A connection attempt's outcome: never a ready while the server drains. */
async function attempt(wsUrl: string, key: string): Promise<'refused' | 'restarting' | 'accepted'> {
  let client: WsTestClient;
  try {
    client = await WsTestClient.open(wsUrl);
  } catch {
    return 'refused';
  }
  client.send({ type: 'start', ...textStart(sid(), { greeting: false }), api_key: key });
  const closed = await client.waitClose(WAIT_MS).catch(() => undefined);
  client.assertProtocol();
  if (client.all('ready').length > 0) return 'accepted';
  const codes = client.all('error').map((e) => e.code);
  if (closed === undefined) return 'accepted';
  // A socket accepted in the last instant may be cut without a frame; anything else must say why.
  if (codes.length === 0 || (codes.length === 1 && codes[0] === 'server_restarting' && closed.code === 1012)) return 'restarting';
  throw new Error(`unexpected answer during drain: ${codes.join(',')} close ${closed.code}`);
}

describe('SIGTERM drain (child process)', () => {
  it('live sessions get server_restarting (retryable) and close 1012; new connections are refused; exit code 0', async () => {
    const server = await spawnServer({ LOCAL_LLM_WORD_DELAY_MS: '50', DRAIN_TIMEOUT_MS: '3000' });
    const wsUrl = `ws://127.0.0.1:${server.port}/ws`;

    const a = await startSession(wsUrl, { ...textStart(sid(), { greeting: false }), api_key: server.key });
    const b = await startSession(wsUrl, textStart(sid(), { greeting: false }), { authorization: `Bearer ${server.key}` });
    await expectAlive(a.client, 'hello');
    await expectAlive(b.client, 'hello');
    // b is mid-reply when the signal lands.
    const text = longSay(60);
    b.client.send({ type: 'input_text', text });
    const asr = await b.client.waitFor('asr', (f) => f.text === text);
    await b.client.waitFor('text_delta', (f) => f.turn_id === asr.turn_id);

    expect(server.process.kill('SIGTERM')).toBe(true);

    for (const client of [a.client, b.client]) {
      const closed = await client.waitClose(WAIT_MS);
      expect(closed.code).toBe(1012);
      const errors = client.all('error');
      expect(errors.map((e) => e.code)).toEqual(['server_restarting']);
      expect(errors[0]?.retryable).toBe(true);
      client.assertProtocol();
    }

    expect(await attempt(wsUrl, server.key)).not.toBe('accepted');

    const exit = await within(15_000, server.exited);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(server.stderr()).not.toMatch(/failed|error/i);
  }, 60_000);

  it('a second SIGTERM during the drain (a process-group signal plus one forwarded by npm) changes nothing', async () => {
    const server = await spawnServer({ DRAIN_TIMEOUT_MS: '5000' });
    const health = async (): Promise<number> => (await fetch(`http://127.0.0.1:${server.port}/healthz`)).status;
    const { client } = await startSession(`ws://127.0.0.1:${server.port}/ws`, { ...textStart(sid(), { greeting: false }), api_key: server.key });
    // A client that does not read: the drain waits for its close handshake, so it stays under way.
    client.ws.pause();
    server.process.kill('SIGTERM');
    await vi.waitFor(async () => expect(await health()).toBe(503), { timeout: WAIT_MS });
    server.process.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await health()).toBe(503);
    client.ws.resume();
    const closed = await client.waitClose(WAIT_MS);
    expect(closed.code).toBe(1012);
    expect(client.all('error').map((e) => e.code)).toEqual(['server_restarting']);
    expect(await server.exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('with no sessions, SIGTERM exits 0 and the port stops answering', async () => {
    const server = await spawnServer();
    const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(health.status).toBe(200);
    // The embedded default has no shared store to ask: ready as soon as it listens.
    const ready = await fetch(`http://127.0.0.1:${server.port}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready', checks: {} }]);
    server.process.kill('SIGTERM');
    const exit = await within(15_000, server.exited);
    expect(exit).toEqual({ code: 0, signal: null });
    await expect(fetch(`http://127.0.0.1:${server.port}/healthz`)).rejects.toThrow();
  }, 60_000);
});

describe('stop() drain (in process)', () => {
  it('tells live sessions server_restarting, closes them with 1012, and refuses a connection attempted after stop began', async () => {
    const t = await startTestServer();
    const a = await startSession(t.wsUrl, { ...textStart(sid(), { greeting: false }), api_key: t.key });
    const b = await startSession(t.wsUrl, { ...textStart(sid(), { greeting: false }), api_key: t.key });
    const stopping = t.stop();
    const during = attempt(t.wsUrl, t.key);
    for (const client of [a.client, b.client]) {
      const closed = await client.waitClose(WAIT_MS);
      expect(closed.code).toBe(1012);
      expect(client.all('error').map((e) => [e.code, e.retryable])).toEqual([['server_restarting', true]]);
      client.assertProtocol();
    }
    expect(await during).not.toBe('accepted');
    await stopping;
    expect(t.server.context.sessions.size).toBe(0);
  });

  it('a client slow to read its backlog still gets server_restarting and close 1012, not a cut connection', async () => {
    const t = await startTestServer();
    const { client } = await startSession(t.wsUrl, { ...textStart(sid(), { greeting: false }), api_key: t.key });
    // Stop reading, and make the server queue megabytes of frames (each asr echoes ~19 KB).
    client.ws.pause();
    const big = `say ${'x'.repeat(19_000)}`;
    for (let i = 0; i < 600; i += 1) client.send({ type: 'input_text', text: big });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: {} });
    const stopping = t.stop();
    // The drain now waits for this client's close handshake, so it is observably under way:
    // health and readiness say draining, and a new connection is told server_restarting and closed.
    const health = await fetch(`${t.url}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'draining' });
    const draining = await fetch(`${t.url}/readyz`);
    expect(draining.status).toBe(503);
    expect(await draining.json()).toEqual({ status: 'draining', checks: {} });
    const late = await WsTestClient.open(t.wsUrl);
    late.send({ type: 'start', ...textStart(sid()), api_key: t.key });
    await expectFatal(late, 'server_restarting', true, 1012);
    late.assertProtocol();
    client.ws.resume();
    const closed = await client.waitClose(30_000);
    expect(client.all('error').map((e) => [e.code, e.retryable])).toEqual([['server_restarting', true]]);
    expect(closed.code).toBe(1012);
    await stopping;
    client.assertProtocol();
  }, 60_000);
});

/** The promise's value, or 'timeout' after `ms`. */
function within<T>(ms: number, promise: Promise<T>): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, ms, 'timeout')));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

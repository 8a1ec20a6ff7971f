import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectFatal, sid, textStart } from '../testing/conversation.ts';
import { twoProcessesForThisFile } from '../testing/two-processes-per-file.ts';
import type { TestServer } from '../testing/test-server.ts';
import { startSession, WsTestClient } from '../testing/ws-test-client.ts';

/**
 * The shared engines fail under load and come back: Redis crashes (and restarts empty) under
 * live sessions, PostgreSQL stops and starts under key exchanges. No crash, nothing accepted
 * lost, clear retryable refusals meanwhile, and everything works again once they are back.
 */
const d = twoProcessesForThisFile();
let a: TestServer;
let b: TestServer;
beforeAll(() => {
  ({ a, b } = d);
});

const start = (on: TestServer, sessionId: string, extra: Record<string, unknown> = {}) => d.start(on, sessionId, extra);

async function say(client: WsTestClient, text: string, reply: string): Promise<void> {
  d.fake.enqueue({ text: reply });
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text, 5000, after);
  const done = await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 8000);
  expect(done.status).toBe('completed');
}

async function readiness(on: TestServer): Promise<{ status: number; body: { status: string; checks: Record<string, string>; unreachable?: string[] } }> {
  const res = await fetch(`${on.url}/readyz`);
  return { status: res.status, body: (await res.json()) as never };
}

/** A start with a resume token and what came back: ready, or the error and the close. */
async function tryResume(on: TestServer, sessionId: string, token: string): Promise<WsTestClient> {
  const client = await WsTestClient.open(on.wsUrl);
  d.track(client);
  client.send({ type: 'start', ...textStart(sessionId, { greeting: false }), api_key: on.key, resume_token: token });
  await Promise.race([client.waitFor('ready'), client.waitFor('error')]);
  return client;
}

describe.skipIf(!d.enabled)('Redis crashes and restarts empty under live sessions', () => {
  it('sessions keep talking, new ones start, resumes wait (retryable) and then succeed, and nothing is lost', async () => {
    expect(await readiness(a)).toMatchObject({ status: 200, body: { status: 'ready', checks: { redis: 'ok', postgres: 'ok' } } });
    const live = await Promise.all([a, a, b, b].map((on, i) => start(on, sid(`live${i}`))));
    for (const [i, s] of live.entries()) await say(s.client, `I am client ${i}`, `Hello client ${i}.`);
    const droppedId = sid('dropped');
    const dropped = await start(a, droppedId);
    await say(dropped.client, 'remember the number 7', 'Seven, noted.');

    await d.redis.stop(true);
    await eventually(async () => (await readiness(a)).status === 503 && (await readiness(b)).status === 503, 10_000, 'readiness to report Redis');
    expect(await readiness(b)).toMatchObject({ status: 503, body: { status: 'unready', checks: { redis: 'unreachable', postgres: 'ok' }, unreachable: ['redis'] } });

    // Live sessions go on; a new session starts (without cross-process resume until Redis is back).
    for (const [i, s] of live.entries()) await say(s.client, `still there ${i}?`, `Yes ${i}.`);
    const fresh = await start(b, sid('fresh'));
    await say(fresh.client, 'hi', 'Hi.');
    // A conversation dropped now is held by its process; a resume attempt is refused as retryable.
    dropped.client.ws.terminate();
    await dropped.client.waitClose();
    const early = await tryResume(b, droppedId, dropped.ready.resume_token);
    await expectFatal(early, 'store_unavailable', true, 1013);

    await d.redis.start();
    await eventually(async () => (await readiness(a)).status === 200 && (await readiness(b)).status === 200, 15_000, 'readiness to recover');
    const raw = new Redis(d.redis.url);
    try {
      // What A held during the outage is written; every live conversation writes itself through again.
      await eventually(async () => (await raw.exists(`${d.env.REDIS_KEY_PREFIX}resume:${dropped.ready.resume_token}`)) === 1, 5000, 'the held stash entry to be written');
      for (const s of live) await eventually(async () => (await raw.exists(`${d.env.REDIS_KEY_PREFIX}resume:${s.ready.resume_token}`)) === 1, 5000, 'live entries to be written again');
      await eventually(async () => (await a.server.context.stores.live.list()).length === live.length + 1, 5000, 'leases to be registered again');
    } finally {
      raw.disconnect();
    }

    const resumed = await tryResume(b, droppedId, dropped.ready.resume_token);
    expect(resumed.all('error')).toEqual([]);
    const before = d.fake.requests.length;
    await say(resumed, 'what number?', 'Seven.');
    expect((d.fake.requests[before] as { messages: { content: string }[] }).messages.map((m) => m.content)).toContain('remember the number 7');
    for (const s of [...live, { client: resumed }]) s.client.assertProtocol();
  }, 60_000);
});

describe.skipIf(!d.enabled)('PostgreSQL stops and starts under key exchanges', () => {
  it('exchanges answer 503 with Retry-After meanwhile (never 401 or 500); scoped keys and live sessions go on', async () => {
    const scoped = a.scopedKey('scoped-during-outage');
    const live = await start(a, sid('pglive'));
    const statuses: number[] = [];
    const refusals: Array<{ retryAfter: string | null; body: unknown }> = [];
    let stop = false;
    const exchanges = (async () => {
      while (!stop) {
        const res = await fetch(`${a.url}/api/v1/session-keys`, { method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ session_id: 'pg-1' }) });
        statuses.push(res.status);
        const body: unknown = await res.json();
        if (res.status === 503) refusals.push({ retryAfter: res.headers.get('retry-after'), body });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      await eventually(() => statuses.length >= 5, 5000, 'exchanges before the outage');
      await d.postgres.stop();
      await eventually(() => statuses.at(-1) === 503, 10_000, 'exchanges to be refused');
      expect(await readiness(a)).toMatchObject({ status: 503, body: { checks: { postgres: 'unreachable', redis: 'ok' }, unreachable: ['postgres'] } });

      // Signed scoped keys need no database; a live session goes on; a persistent key waits.
      const byScoped = await startSession(a.wsUrl, { ...textStart('scoped-during-outage', { greeting: false }), api_key: scoped });
      d.track(byScoped.client);
      await say(byScoped.client, 'hello', 'Hello.');
      await say(live.client, 'still fine?', 'Yes.');
      const byPersistent = await WsTestClient.open(a.wsUrl);
      byPersistent.send({ type: 'start', ...textStart(sid(), { greeting: false }), api_key: a.key });
      await expectFatal(byPersistent, 'store_unavailable', true, 1013);
      const refusedHandshake = await WsTestClient.open(a.wsUrl, { authorization: `Bearer ${a.key}` }).catch((e: Error) => e);
      expect(String(refusedHandshake)).toContain('handshake refused: 503');
      // A report that cannot be stored is not acknowledged.
      const report = await WsTestClient.open(a.wsUrl);
      report.send({ type: 'feedback', session_id: 'pg-1', api_key: a.key, rating: 3 });
      await expectFatal(report, 'store_unavailable', true, 1013);

      await d.postgres.start();
      await eventually(() => statuses.at(-1) === 201, 15_000, 'exchanges to succeed again');
    } finally {
      stop = true;
      await exchanges;
    }
    expect((await readiness(a)).status).toBe(200);
    expect(new Set(statuses)).toEqual(new Set([201, 503]));
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) expect(refusal).toEqual({ retryAfter: '2', body: { code: 'store_unavailable', detail: expect.any(String), retryable: true } });
    const after = await startSession(a.wsUrl, { ...textStart(sid(), { greeting: false }), api_key: a.key });
    d.track(after.client);
    expect(after.ready.type).toBe('ready');
  }, 60_000);
});


import { beforeAll, describe, expect, it } from 'vitest';
import { dropConnection as drop, eventually, say, sid, textStart } from '../testing/conversation.ts';
import { runSessionsCli } from '../stores/sessions-cli.ts';
import { twoProcessesForThisFile } from '../testing/two-processes-per-file.ts';
import type { TestServer } from '../testing/test-server.ts';
import { startSession, WsTestClient } from '../testing/ws-test-client.ts';

/**
 * Two server processes of one deployment (in this test process, each with its own stores,
 * connections and memory) sharing a real Redis and a real PostgreSQL: what one process saw,
 * the other must know.
 */
const d = twoProcessesForThisFile();
let a: TestServer;
let b: TestServer;
beforeAll(() => {
  ({ a, b } = d);
});

const start = (on: TestServer, sessionId: string, extra: Record<string, unknown> = {}, mode: Record<string, unknown> = {}) => d.start(on, sessionId, extra, mode);
const messagesOf = (index: number) => (d.fake.requests[index] as { messages: { role: string; content: string | null }[] }).messages;

describe.skipIf(!d.enabled)('one deployment, two processes', () => {
  it('a conversation dropped from A resumes on B: its history, its deferred job and its unanswered tool call', async () => {
    const sessionId = sid('move');
    const tools = [
      { name: 'lookup_order', parameters: { type: 'object', properties: { id: { type: 'string' } } } },
      { name: 'book_table', deferrable: true },
    ];
    const { client, ready } = await start(a, sessionId, {}, { tools });
    d.fake.enqueue({ text: 'Nice to meet you, Ada.' });
    await say(client, 'my name is Ada');
    d.fake.enqueue({ toolCalls: [{ id: 'call_9', name: 'book_table', args: {} }] }, { text: 'I am booking it.' });
    client.send({ type: 'input_text', text: 'book a table' });
    await client.waitFor('tool_call', (f) => f.id === 'call_9');
    client.send({ type: 'tool_deferred', id: 'call_9', handle: 'h-9', status_label: 'Booking' });
    const ack = await client.waitFor('tool_deferred_ack');
    await client.waitFor('done');
    d.fake.enqueue({ toolCalls: [{ id: 'call_1', name: 'lookup_order', args: { id: '42' } }] });
    client.send({ type: 'input_text', text: 'where is order 42?' });
    await client.waitFor('tool_call', (f) => f.id === 'call_1');
    await drop(client);
    // A stashes what it had (the open call came after the last turn end) once it sees the drop.
    await eventually(() => !a.server.context.sessions.all().some((s) => s.sessionId === sessionId), 5000, 'A to see the drop');
    await a.server.context.sessions.writesSettled();

    const again = await start(b, sessionId, { resume_token: ready.resume_token });
    const resumed = await again.client.waitFor('tool_deferred_resume');
    expect(resumed).toEqual({ type: 'tool_deferred_resume', id: 'call_9', handle: 'h-9', name: 'book_table', job_id: ack.job_id, status_label: 'Booking' });
    d.fake.enqueue({ text: 'Order 42 has shipped, Ada.' });
    const before = d.fake.requests.length;
    again.client.send({ type: 'tool_result', id: 'call_1', content: { status: 'shipped' }, outcome: 'succeeded', verified: true });
    const turn = await again.client.waitFor('turn');
    await again.client.waitFor('done', (f) => f.turn_id === turn.turn_id);
    const sent = messagesOf(before).map((m) => `${m.role}:${m.content ?? ''}`);
    expect(sent).toContain('user:my name is Ada');
    expect(sent).toContain('assistant:Nice to meet you, Ada.');
    expect(sent).toContain('user:book a table');
    // The result reached the model once (as a late result of the call the drop left open).
    expect(JSON.stringify(messagesOf(before)).match(/shipped/g)).toHaveLength(1);
    expect(again.client.all('error')).toEqual([]);
    again.client.assertProtocol();
  });

  it('one token raced on A and B at the same moment: exactly one ready, the other resume_failed, 100 times out of 100', async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 100; i += 1) {
      const sessionId = sid('race');
      const { client, ready } = await start(i % 2 === 0 ? a : b, sessionId);
      await drop(client);
      const racers = await Promise.all([WsTestClient.open(a.wsUrl), WsTestClient.open(b.wsUrl)]);
      racers.forEach(d.track);
      for (const racer of racers) racer.send({ type: 'start', ...textStart(sessionId, { greeting: false }), api_key: a.key, resume_token: ready.resume_token });
      const answers = await Promise.all(racers.map(async (r) => (await Promise.race([r.waitFor('ready'), r.waitFor('error')])).type === 'ready' ? 'ready' : (r.all('error')[0]?.code ?? '?')));
      outcomes.push(answers.sort().join('+'));
      for (const r of racers) r.ws.terminate();
    }
    expect(outcomes.filter((o) => o !== 'ready+resume_failed')).toEqual([]);
  }, 60_000);

  it('a key revoked on A stops key exchanges on B at once; scoped keys it issued keep working', async () => {
    const created = await a.server.context.stores.keys.create('revokable');
    const exchange = (on: TestServer) =>
      fetch(`${on.url}/api/v1/session-keys`, { method: 'POST', headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ session_id: 'rev-1' }) });
    const before = await exchange(b);
    expect(before.status).toBe(201);
    const scoped = ((await before.json()) as { api_key: string }).api_key;
    expect(await a.server.context.stores.keys.revoke(created.id)).toBe('revoked');
    const revokedAt = Date.now();
    const after = await exchange(b);
    expect(after.status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1000);
    const s = await startSession(a.wsUrl, { ...textStart('rev-1', { greeting: false }), api_key: scoped });
    d.track(s.client);
    expect(s.ready.type).toBe('ready');
  });

  it('the registry counts an account\'s live sessions across both processes, and forgets them as they end', async () => {
    const account = await a.server.context.stores.keys.create('counted');
    const clients: WsTestClient[] = [];
    for (const [i, on] of [a, a, a, b, b].entries()) {
      const s = await startSession(on.wsUrl, { ...textStart(sid(`count${i}`), { greeting: false }), api_key: account.key });
      clients.push(s.client);
    }
    expect(await a.server.context.stores.live.countForAccount('counted')).toBe(5);
    expect(await b.server.context.stores.live.countForAccount('counted')).toBe(5);
    const listed = await b.server.context.stores.live.list('counted');
    expect(listed.map((s) => s.instance).sort()).toEqual([...Array(3).fill(a.server.context.stores.live.instance), ...Array(2).fill(b.server.context.stores.live.instance)].sort());
    // The operator's view: `npm run sessions`, against the same Redis.
    let stdout = '';
    const cliEnv = { REDIS_URL: d.env.REDIS_URL, REDIS_KEY_PREFIX: d.env.REDIS_KEY_PREFIX };
    expect(await runSessionsCli(['--account', 'counted'], cliEnv, { stdout: (t) => (stdout += t), stderr: () => undefined })).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]?.split(/\s+/)).toEqual(['session_id', 'account', 'modality', 'transport', 'process', 'started']);
    expect(lines.slice(1, -1).map((l) => l.split(/\s+/).slice(1, 4))).toEqual(Array(5).fill(['counted', 'text', 'websocket']));
    expect(lines.at(-1)).toBe('5 live');
    for (const c of clients) c.close();
    await eventually(async () => (await a.server.context.stores.live.countForAccount('counted')) === 0, 5000, 'the leases to be released');
    stdout = '';
    await runSessionsCli(['--account', 'counted', '--json'], cliEnv, { stdout: (t) => (stdout += t), stderr: () => undefined });
    expect(JSON.parse(stdout)).toEqual([]);
  });

  it('written through at every turn end: B resumes a conversation A still holds, and A then ends its copy with resumed_elsewhere', async () => {
    const sessionId = sid('wt');
    const held = await start(a, sessionId);
    d.fake.enqueue({ text: 'Noted: blue.' });
    await say(held.client, 'my favourite colour is blue');
    // The write-through follows the turn's done; here it has landed in Redis.
    await a.server.context.sessions.writesSettled();

    // No drop: A still has the socket (a half-open connection, as after a network change).
    const moved = await start(b, sessionId, { resume_token: held.ready.resume_token });
    d.fake.enqueue({ text: 'Blue.' });
    const before = d.fake.requests.length;
    await say(moved.client, 'what is my favourite colour?');
    expect(messagesOf(before).map((m) => m.content)).toContain('my favourite colour is blue');

    // A learns at its next write that the token is gone, and stops serving a copy.
    d.fake.enqueue({ text: 'stale' });
    held.client.send({ type: 'input_text', text: 'anyone there?' });
    const closed = await held.client.waitClose();
    expect(closed.code).toBe(4409);
    expect(held.client.all('error').map((e) => [e.code, e.retryable])).toEqual([['resumed_elsewhere', false]]);
    held.client.assertProtocol();
  });

  it('a clean end on A leaves nothing to resume on B', async () => {
    const sessionId = sid('clean');
    const { client, ready } = await start(a, sessionId);
    d.fake.enqueue({ text: 'ok' });
    await say(client, 'hello');
    client.close();
    await client.waitClose();
    await eventually(() => !a.server.context.sessions.all().some((s) => s.sessionId === sessionId), 5000, 'the session to end');
    await a.server.context.sessions.writesSettled();
    const c = await WsTestClient.open(b.wsUrl);
    d.track(c);
    c.send({ type: 'start', ...textStart(sessionId), api_key: b.key, resume_token: ready.resume_token });
    expect((await c.waitFor('error')).code).toBe('resume_failed');
  });

  it('feedback sent to either process is stored once in PostgreSQL', async () => {
    const ids: string[] = [];
    for (const on of [a, b]) {
      const client = await WsTestClient.open(on.wsUrl);
      client.send({ type: 'feedback', session_id: 'fb-1', api_key: on.key, rating: 5, text: `via ${on.url}` });
      ids.push((await client.waitFor('feedback_ack')).id);
      await client.waitClose();
    }
    const { Client } = (await import('pg')).default;
    const db = new Client({ connectionString: a.server.context.config.DATABASE_URL });
    await db.connect();
    try {
      const rows = (await db.query('SELECT id, kind, account, body FROM reports ORDER BY received_at')).rows as Array<{ id: string; kind: string; account: string; body: { text: string } }>;
      expect(rows.map((r) => r.id)).toEqual(ids);
      expect(rows.every((r) => r.kind === 'feedback' && r.account === 'acme')).toBe(true);
      expect(rows.map((r) => r.body.text)).toEqual([`via ${a.url}`, `via ${b.url}`]);
    } finally {
      await db.end();
    }
  });
});

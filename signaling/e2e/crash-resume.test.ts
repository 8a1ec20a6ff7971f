import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../session/testing/fake-openai-server.ts';
import { eventually, sid, textStart } from '../testing/conversation.ts';
import { deploymentEnv } from '../testing/deployment.ts';
import { postgresAvailable, startPostgres, type TestPostgres } from '../testing/postgres-server.ts';
import { redisAvailable, startRedis, type TestRedis } from '../testing/redis-server.ts';
import { startServerProcess, type ServerProcess } from '../testing/server-process.ts';
import { createPersistentKey } from '../testing/sql-engines.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { startSession, type WsTestClient } from '../testing/ws-test-client.ts';

/**
 * A process killed with SIGKILL (no drain, no stash on the way out): its conversations were
 * written through at every turn end, so a client holding its latest resume token resumes on
 * another process with everything up to the last completed turn, and the dead process's
 * leases leave the registry within SESSION_LEASE_MS.
 */
const engines = redisAvailable() && postgresAvailable();
let redis: TestRedis;
let postgres: TestPostgres;
let fake: FakeOpenAiServer;
let victim: ServerProcess;
let survivor: TestServer;
let key: string;
let prefix: string;

beforeAll(async () => {
  if (!engines) return;
  [redis, postgres, fake] = await Promise.all([startRedis(), startPostgres(), startFakeOpenAiServer()]);
  // Speech providers point nowhere: these are text sessions, and no local recogniser is started.
  const env = {
    ...(await deploymentEnv({ redis, postgres })),
    LLM_PROVIDER: 'openai', LLM_BASE_URL: fake.url, SESSION_LEASE_MS: '1000',
    ASR_PROVIDER: 'openai', ASR_BASE_URL: 'http://127.0.0.1:9/v1', TTS_PROVIDER: 'openai', TTS_BASE_URL: 'http://127.0.0.1:9/v1',
  };
  key = (await createPersistentKey({ DATA_DIR: '', DATABASE_URL: env.DATABASE_URL }, 'crashy')).key;
  prefix = env.REDIS_KEY_PREFIX;
  [victim, survivor] = await Promise.all([startServerProcess(env), startTestServer(env, { voice: { ok: false, reason: 'text-only test' } })]);
}, 60_000);
afterAll(async () => {
  if (!engines) return;
  victim?.child.kill('SIGKILL');
  await survivor?.stop();
  await Promise.all([redis.close(), postgres.close(), fake.close()]);
});

async function say(client: WsTestClient, text: string): Promise<void> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text, 5000, after);
  await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 8000);
}

describe.skipIf(!engines)('SIGKILL of the process holding a conversation', () => {
  it('the client resumes on another process with every completed turn; the dead lease expires', async () => {
    const sessionId = sid('crash');
    const { client, ready } = await startSession(`${victim.url.replace(/^http/, 'ws')}/ws`, { ...textStart(sessionId, { greeting: 'Hello from A.' }), api_key: key });
    await client.waitFor('done');
    fake.enqueue({ text: 'Nice to meet you, Ada.' });
    await say(client, 'my name is Ada');
    fake.enqueue({ text: 'Paris is lovely.' });
    await say(client, 'I live in Paris');
    expect(await survivor.server.context.stores.live.countForAccount('crashy')).toBe(1);
    // Written through: the entry in Redis already holds the last completed turn.
    const raw = new Redis(redis.url);
    try {
      // The history is a list of messages beside the entry's hash (stores/redis/stash-scripts.ts).
      await eventually(async () => (await raw.lrange(`${prefix}resume-h:${ready.resume_token}`, 0, -1)).some((m) => m.includes('Paris is lovely.')), 5000, 'the turn to be written through');
    } finally {
      raw.disconnect();
    }

    // A reply is streaming when the process dies.
    fake.delayMs = 50;
    fake.enqueue({ text: 'Once upon a time there was a very long story that never got to its end at all' });
    client.send({ type: 'input_text', text: 'tell me a long story' });
    await client.waitFor('text_delta');
    victim.child.kill('SIGKILL');
    await victim.exited;
    expect((await client.waitClose()).code).toBe(1006);
    fake.delayMs = 0;

    const again = await startSession(survivor.wsUrl, { ...textStart(sessionId, { greeting: 'Hello from A.' }), api_key: key, resume_token: ready.resume_token });
    expect(again.client.all('turn')).toEqual([]); // no second greeting
    fake.enqueue({ text: 'You are Ada, from Paris.' });
    const before = fake.requests.length;
    await say(again.client, 'who am I?');
    const sent = (fake.requests[before] as { messages: { role: string; content: string }[] }).messages.map((m) => `${m.role}:${m.content}`);
    expect(sent.slice(1)).toEqual([
      'assistant:Hello from A.',
      'user:my name is Ada',
      'assistant:Nice to meet you, Ada.',
      'user:I live in Paris',
      'assistant:Paris is lovely.',
      'user:who am I?',
    ]);
    again.client.assertProtocol();

    // The dead process renews nothing: its lease goes; the resumed session holds the only one.
    await eventually(async () => (await survivor.server.context.stores.live.list('crashy')).every((s) => s.instance === survivor.server.context.stores.live.instance), 5000, 'the dead lease to expire');
    expect(await survivor.server.context.stores.live.countForAccount('crashy')).toBe(1);
  }, 30_000);
});

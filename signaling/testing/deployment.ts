import { randomBytes } from 'node:crypto';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../session/testing/fake-openai-server.ts';
import { textStart } from './conversation.ts';
import { startPostgres, type TestPostgres } from './postgres-server.ts';
import { startRedis, type TestRedis } from './redis-server.ts';
import { startTestServer, type TestServer } from './test-server.ts';
import { startSession, type WsTestClient } from './ws-test-client.ts';

export interface DeploymentEnv {
  DATABASE_URL: string;
  REDIS_URL: string;
  REDIS_KEY_PREFIX: string;
  SCOPED_KEY_SECRET: string;
}

/**
 * The environment every process of one deployment shares: a fresh PostgreSQL database, a Redis
 * key prefix and a scoped-key secret of its own. Give it to several servers (in-process with
 * startTestServer, or startServerProcess) and they act as one service.
 */
export async function deploymentEnv(engines: { redis: TestRedis; postgres: TestPostgres }): Promise<DeploymentEnv> {
  return {
    DATABASE_URL: await engines.postgres.createDatabase(),
    REDIS_URL: engines.redis.url,
    REDIS_KEY_PREFIX: engines.redis.prefix(),
    SCOPED_KEY_SECRET: randomBytes(24).toString('hex'),
  };
}

/**
 * Two text-only servers of one deployment in this test process (each with its own stores,
 * connections and memory) on a real Redis and PostgreSQL, with a fake OpenAI-compatible model:
 * the in-process form of "two processes behind a load balancer".
 */
export interface TwoProcesses {
  redis: TestRedis;
  postgres: TestPostgres;
  fake: FakeOpenAiServer;
  env: DeploymentEnv;
  a: TestServer;
  b: TestServer;
  /** A text session on `on` with its persistent key (greeting off unless `mode` says otherwise). */
  start(on: TestServer, sessionId: string, extra?: Record<string, unknown>, mode?: Record<string, unknown>): ReturnType<typeof startSession>;
  /** Remembers a client so close() terminates it. */
  track(client: WsTestClient): WsTestClient;
  close(): Promise<void>;
}

export async function startTwoProcesses(extraEnv: Record<string, string> = {}): Promise<TwoProcesses> {
  const [redis, postgres, fake] = await Promise.all([startRedis(), startPostgres(), startFakeOpenAiServer()]);
  const env = await deploymentEnv({ redis, postgres });
  const serverEnv = { ...env, LLM_PROVIDER: 'openai', LLM_BASE_URL: fake.url, HEARTBEAT_INTERVAL_MS: '60000', ...extraEnv };
  const textOnly = { voice: { ok: false as const, reason: 'text-only test' } };
  const [a, b] = await Promise.all([startTestServer(serverEnv, textOnly), startTestServer(serverEnv, textOnly)]);
  const clients: WsTestClient[] = [];
  const track = (client: WsTestClient): WsTestClient => {
    clients.push(client);
    return client;
  };
  return {
    redis, postgres, fake, env, a, b, track,
    async start(on, sessionId, extra = {}, mode = {}) {
      const s = await startSession(on.wsUrl, { ...textStart(sessionId, { greeting: false, ...mode }), api_key: on.key, ...extra });
      track(s.client);
      return s;
    },
    async close() {
      for (const c of clients) c.ws.terminate();
      await Promise.all([a.stop(), b.stop()]);
      await Promise.all([redis.close(), postgres.close(), fake.close()]);
    },
  };
}

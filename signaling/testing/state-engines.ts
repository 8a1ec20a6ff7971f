import { RedisConnection } from '../stores/redis/redis-connection.ts';
import { redisAvailable, startRedis, type TestRedis } from './redis-server.ts';

/**
 * Both homes of live state for contract tests: `describe.each(stateEngines())` runs one suite
 * on this process's memory and on a real redis-server. Redis starts once per test file, on
 * first use; every `connection()` is a new client under a key prefix of its own, so tests never
 * see each other's keys. Two connections with the same prefix act as two processes.
 */
export interface StateEngine {
  name: 'memory' | 'redis';
  /**
   * A client under a fresh prefix (undefined on memory); `samePrefixAs` joins another one's keys;
   * `commandTimeoutMs` as RedisConnection's.
   */
  connection(samePrefixAs?: RedisConnection, commandTimeoutMs?: number): Promise<RedisConnection | undefined>;
  /** The running redis-server, to stop and restart under load (redis only). */
  server(): Promise<TestRedis>;
  cleanup(): Promise<void>;
}

const quiet = { warn: () => undefined, info: () => undefined };

export function stateEngines(): StateEngine[] {
  const memory: StateEngine = {
    name: 'memory',
    connection: async () => undefined,
    server: () => Promise.reject(new Error('the memory engine has no server')),
    cleanup: async () => undefined,
  };
  if (!redisAvailable()) {
    process.stderr.write('redis-server: not installed (apt-get install -y --no-install-recommends redis-server); Redis contract tests are SKIPPED\n');
    return [memory];
  }
  let server: Promise<TestRedis> | undefined;
  const opened: RedisConnection[] = [];
  const redis: StateEngine = {
    name: 'redis',
    server: () => (server ??= startRedis()),
    async connection(samePrefixAs, commandTimeoutMs) {
      const running = await redis.server();
      const connection = new RedisConnection(running.url, samePrefixAs?.prefix ?? running.prefix(), quiet, commandTimeoutMs);
      opened.push(connection);
      await connection.waitReady(5000);
      return connection;
    },
    async cleanup() {
      await Promise.all(opened.splice(0).map((c) => c.close()));
      if (server) await (await server).close();
    },
  };
  return [memory, redis];
}

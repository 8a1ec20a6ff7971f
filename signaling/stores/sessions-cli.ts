import { parseArgs } from 'node:util';
import { isMainModule, processOut, type CliOut } from '../cli-main.ts';
import type { LiveSession } from './live-sessions.ts';
import { RedisConnection } from './redis/redis-connection.ts';
import { RedisLiveSessions } from './redis/redis-live-sessions.ts';

export type SessionsEnv = { REDIS_URL?: string | undefined; REDIS_KEY_PREFIX?: string | undefined };

const USAGE = `usage: npm run sessions -- [--account NAME] [--json]

Lists the live sessions of every process of the deployment (from Redis), oldest first.

environment:
  REDIS_URL           the deployment's Redis (required: without it each process knows only its own)
  REDIS_KEY_PREFIX    as the servers use it (default parley:)
`;

const quiet = { warn: () => undefined, info: () => undefined };

/** `npm run sessions`: the operator's view of who is talking, on which process. */
export async function runSessionsCli(argv: string[], env: SessionsEnv, out: CliOut): Promise<number> {
  let values: { account?: string; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: { account: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (err) {
    out.stderr(`sessions: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    out.stdout(USAGE);
    return 0;
  }
  if (!env.REDIS_URL) {
    out.stderr('sessions: REDIS_URL is not set: without Redis each process knows only its own sessions (GET /healthz counts them)\n');
    return 2;
  }
  const connection = new RedisConnection(env.REDIS_URL, env.REDIS_KEY_PREFIX || 'parley:', quiet);
  const registry = new RedisLiveSessions(connection, 'cli', 60_000);
  try {
    if (!(await connection.waitReady(3000))) throw new Error(`Redis at ${env.REDIS_URL} does not answer`);
    const sessions = await registry.list(values.account);
    out.stdout(values.json ? `${JSON.stringify(sessions)}\n` : table(sessions));
    return 0;
  } catch (err) {
    out.stderr(`sessions: error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await registry.close();
    await connection.close();
  }
}

function table(sessions: LiveSession[]): string {
  const rows = [['session_id', 'account', 'modality', 'transport', 'process', 'started'], ...sessions.map((s) => [s.sessionId, s.account, s.modality, s.transport, s.instance, s.startedAt])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return `${rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')}\n${sessions.length} live\n`;
}

if (isMainModule(import.meta.url)) {
  process.exitCode = await runSessionsCli(process.argv.slice(2), process.env, processOut);
}

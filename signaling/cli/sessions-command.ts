import { Command } from 'commander';
import { loadConfig } from '../config.ts';
import type { LiveSession } from '../stores/live-sessions.ts';
import { RedisConnection } from '../stores/redis/redis-connection.ts';
import { RedisLiveSessions } from '../stores/redis/redis-live-sessions.ts';
import { UsageError, type CliIo } from './cli-io.ts';

const quiet = { warn: () => undefined, info: () => undefined };

/** `parley sessions`: the operator's view of who is talking, on which process (from Redis). */
export function sessionsCommand(io: CliIo): Command {
  return new Command('sessions')
    .description('list the live sessions of every process of the deployment (from Redis at REDIS_URL), oldest first')
    .option('--account <name>', 'only this account\'s sessions')
    .option('--json', 'one JSON array instead of a table')
    .action(async (options: { account?: string; json?: boolean }) => {
      const config = loadConfig(io.env);
      if (!config.REDIS_URL) throw new UsageError('REDIS_URL is not set: without Redis each process knows only its own sessions (GET /healthz counts them)');
      const connection = new RedisConnection(config.REDIS_URL, config.REDIS_KEY_PREFIX, quiet);
      const registry = new RedisLiveSessions(connection, 'cli', 60_000);
      try {
        if (!(await connection.waitReady(3000))) throw new Error(`Redis at ${config.REDIS_URL} does not answer`);
        const sessions = await registry.list(options.account);
        io.stdout(options.json ? `${JSON.stringify(sessions)}\n` : table(sessions));
      } finally {
        await registry.close();
        await connection.close();
      }
    });
}

function table(sessions: LiveSession[]): string {
  const rows = [['session_id', 'account', 'modality', 'transport', 'process', 'started'], ...sessions.map((s) => [s.sessionId, s.account, s.modality, s.transport, s.instance, s.startedAt])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return `${rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')}\n${sessions.length} live\n`;
}

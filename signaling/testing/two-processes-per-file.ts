import { afterAll, beforeAll } from 'vitest';
import { startTwoProcesses, type TwoProcesses } from './deployment.ts';
import { postgresAvailable } from './postgres-server.ts';
import { redisAvailable } from './redis-server.ts';

/**
 * One TwoProcesses for a test file, started in beforeAll and closed in afterAll; `enabled` is
 * false (skip the suite) when redis-server or PostgreSQL is not installed.
 */
export function twoProcessesForThisFile(extraEnv: Record<string, string> = {}): TwoProcesses & { enabled: boolean } {
  const enabled = redisAvailable() && postgresAvailable();
  const holder = { enabled } as TwoProcesses & { enabled: boolean };
  beforeAll(async () => {
    if (enabled) Object.assign(holder, await startTwoProcesses(extraEnv));
  });
  afterAll(async () => {
    if (enabled) await holder.close?.();
  });
  return holder;
}

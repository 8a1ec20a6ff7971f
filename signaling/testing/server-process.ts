import { fileURLToPath } from 'node:url';
import { freePort, spawnEngine, type EngineProcess } from './engine-process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * `signaling/main.ts` as its own process (`node --import tsx`, one process, so a signal reaches
 * the server itself): for what only a real process shows, SIGKILL and SIGTERM. Killed with the
 * test process if the test dies (engine-process.ts's watchdog).
 */
export interface ServerProcess {
  readonly port: number;
  readonly url: string;
  readonly wsUrl: string;
  readonly process: EngineProcess;
}

/** Starts a server with `env` (HOST, PORT and LOG_LEVEL are set unless given) and waits for it to listen. */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = await spawnEngine(process.execPath, ['--import', 'tsx', 'signaling/main.ts'], {
    cwd: ROOT,
    env: { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    ready: (output) => output.includes('parley: listening on'),
  });
  return { port, url: `http://127.0.0.1:${port}`, wsUrl: `ws://127.0.0.1:${port}/ws`, process: child };
}

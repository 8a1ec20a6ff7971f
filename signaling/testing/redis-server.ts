import { connect } from 'node:net';
import { freePort } from './server-process.ts';
import { commandPath, engineDir, removeDir, spawnEngine, type EngineProcess } from './engine-process.ts';

/**
 * A real `redis-server` (Debian package `redis-server`) for a test file: one instance on a free
 * loopback port, no persistence, in a temp dir. Share it across the tests of a file and give
 * each test its own key prefix (`prefix()`); `restart()` brings it back empty on the same port,
 * as a crashed Redis without persistence would come back.
 *
 *   const redis = await startRedis();            // beforeAll
 *   const env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix() };
 *   await redis.close();                         // afterAll
 */
export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** A key prefix no other test of this run uses. */
  prefix(): string;
  /** Stops the server (SIGKILL when `crash`); the port stays reserved for `start()`. */
  stop(crash?: boolean): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  restart(): Promise<void>;
  /** SIGSTOP: Redis hangs with its connections open (commands wait, then time out); thaw() resumes it. */
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export function redisAvailable(): boolean {
  return commandPath('redis-server') !== undefined;
}

let prefixes = 0;

export async function startRedis(): Promise<TestRedis> {
  const dir = engineDir('redis');
  const port = await freePort();
  const launch = (): Promise<EngineProcess> =>
    spawnEngine('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'no', '--loglevel', 'warning', '--logfile', ''], {
      ready: () => ping(port),
      dir,
    });
  let engine: EngineProcess | undefined = await launch();
  const stop = async (crash = false): Promise<void> => {
    await engine?.stop(crash ? 'SIGKILL' : 'SIGTERM');
    engine = undefined;
  };
  const start = async (): Promise<void> => {
    engine ??= await launch();
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    prefix: () => `t${process.pid}-${(prefixes += 1)}:`,
    stop,
    start,
    async restart() {
      await stop();
      await start();
    },
    freeze: () => engine?.signal('SIGSTOP'),
    thaw: () => engine?.signal('SIGCONT'),
    async close() {
      await stop();
      removeDir(dir);
    },
  };
}

/** One PING over a raw socket: no client library needed to know the server is up. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

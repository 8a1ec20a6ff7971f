import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './server-process.ts';
import { commandPath, engineDir, NOBODY, removeDir, runningAsRoot, spawnEngine, type EngineProcess } from './engine-process.ts';

/**
 * A real PostgreSQL (Debian package `postgresql`) for a test file: `initdb` into a temp dir and
 * `postgres` in the foreground on a free loopback port, as `nobody` when the test runs as root
 * (PostgreSQL refuses root). Durability is off (fsync, synchronous_commit): these clusters
 * live for one test run. Share one per file; `createDatabase()` gives each test its own.
 *
 *   const pgServer = await startPostgres();          // beforeAll (about 1.5 s)
 *   const DATABASE_URL = await pgServer.createDatabase();
 *   await pgServer.close();                          // afterAll
 */
export interface TestPostgres {
  readonly port: number;
  /** The maintenance database; use createDatabase() for tests. */
  readonly url: string;
  /** A new empty database; resolves with its URL. */
  createDatabase(): Promise<string>;
  /** Fast shutdown (SIGINT), or SIGKILL when `crash`; the data stays for start(). */
  stop(crash?: boolean): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The newest installed server's bin directory (Debian keeps them out of PATH). */
export function postgresBinDir(): string | undefined {
  const onPath = commandPath('postgres');
  if (onPath) return join(onPath, '..');
  try {
    const versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (commandPath('postgres', [`/usr/lib/postgresql/${v}/bin`])) return `/usr/lib/postgresql/${v}/bin`;
  } catch {
    // no PostgreSQL installed
  }
  return undefined;
}

export function postgresAvailable(): boolean {
  return postgresBinDir() !== undefined;
}

let databases = 0;

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install -y --no-install-recommends postgresql');
  const dir = engineDir('pg', true);
  const data = join(dir, 'data');
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-N', '-E', 'UTF8', '--locale=C'], {
    stdio: 'ignore',
    env: { ...process.env, LC_ALL: 'C' },
    ...(runningAsRoot() ? NOBODY : {}),
  });
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const launch = (): Promise<EngineProcess> =>
    spawnEngine(
      join(bin, 'postgres'),
      ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
      { asNobody: true, ready: () => canConnect(url), watchdogSignal: 'QUIT', dir },
    );
  let engine: EngineProcess | undefined = await launch();
  const stop = async (crash = false): Promise<void> => {
    await engine?.stop(crash ? 'SIGKILL' : 'SIGINT');
    engine = undefined;
  };
  return {
    port,
    url,
    async createDatabase() {
      const name = `t${process.pid}_${(databases += 1)}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    stop,
    async start() {
      engine ??= await launch();
    },
    async close() {
      await stop();
      removeDir(dir);
    },
  };
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

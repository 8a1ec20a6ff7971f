import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './server-process.ts';
import { createPersistentKey } from './sql-engines.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The real `npm start` entry point (signaling/main.ts) in a child process of its own. */
export interface ChildServer {
  process: ChildProcess;
  port: number;
  url: string;
  wsUrl: string;
  /** A persistent key of account `acme`, made before the server started. */
  key: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running, and the data directory removed. */
  kill(): void;
}

/**
 * Starts the server in a child process on a free loopback port with its own data directory.
 * Its event loop is not the test's: what the test measures from the outside is not held up by
 * the server's work, as with a real client.
 */
export async function spawnServer(env: Record<string, string> = {}): Promise<ChildServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-child-'));
  // The key is made before the server starts, as an operator would with `npm run keys create`.
  const { key } = await createPersistentKey({ DATA_DIR: dataDir }, 'acme');

  const port = await freePort();
  // tsx as a loader, not its CLI: the CLI runs the server in a grandchild that a kill would orphan.
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'signaling/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  };
  // Started once it says so on stdout; an early exit fails at once.
  await new Promise<void>((resolve, reject) => {
    let started = false;
    const fail = (message: string): void => {
      if (started) return;
      clearTimeout(timer);
      kill();
      reject(new Error(message));
    };
    const timer = setTimeout(() => fail(`server did not start: ${stdout} ${stderr}`), 30_000);
    const check = (): void => {
      if (started || !stdout.includes('listening')) return;
      started = true;
      clearTimeout(timer);
      resolve();
    };
    child.stdout?.on('data', check);
    void exited.then(({ code }) => fail(`server exited early (${code}): ${stderr}`));
    check();
  });
  const url = `http://127.0.0.1:${port}`;
  return { process: child, port, url, wsUrl: `ws://127.0.0.1:${port}/ws`, key, stdout: () => stdout, stderr: () => stderr, exited, kill };
}

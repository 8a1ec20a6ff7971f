import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Arrivals } from '../../media/testing/arrivals.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The server started as a user starts it (a command line, a directory, an environment), for
 * tests of what the docs and the deploy recipe tell people to run. Resolves once it printed its
 * `parley: listening on <url>` line; stdout so far is kept for further lines.
 */
export interface ServerProcess {
  readonly child: ChildProcess;
  /** http://host:port from the listening line. */
  readonly url: string;
  stdout(): string;
  /** Resolves with the first match of `pattern` in stdout, as soon as it is printed. */
  untilStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  stderr(): string;
  readonly exited: Promise<number | null>;
  /** SIGTERM (the server drains) and the exit code; the whole process group is killed after `graceMs`. */
  stop(graceMs?: number): Promise<number | null>;
}

/** `parley: listening on <url> `, what `parley start` and `npm start` print; programs of their own print other lines. */
const LISTENING = /^parley: listening on (\S+) /m;

export async function spawnServerProcess(
  argv: string[],
  options: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs?: number; listening?: RegExp },
): Promise<ServerProcess> {
  const [command, ...args] = argv;
  // Its own process group, so a failed test takes every process it started down with it.
  const child = spawn(command!, args, { cwd: options.cwd ?? REPO_ROOT, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stdout = '';
  let stderr = '';
  // Waits on stdout re-check on every chunk (and fail at once when the process is gone).
  const printed = new Arrivals();
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    printed.notify();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  void exited.then(() => printed.notify());
  const untilStdout = (pattern: RegExp, timeoutMs = 5000): Promise<RegExpExecArray> =>
    printed.until(
      () => pattern.exec(stdout) ?? undefined,
      timeoutMs,
      () => `${pattern} on stdout: ${stdout}${stderr}`,
      () => (child.exitCode !== null || child.signalCode !== null ? `the server exited (${child.exitCode ?? child.signalCode})` : undefined),
    );
  const killGroup = (): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', killGroup);
  void exited.then(() => process.off('exit', killGroup));

  let url: string;
  try {
    url = (await untilStdout(options.listening ?? LISTENING, options.timeoutMs ?? 30_000))[1]!;
  } catch (error) {
    killGroup();
    throw error;
  }
  return {
    child,
    url,
    stdout: () => stdout,
    untilStdout,
    stderr: () => stderr,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(killGroup, graceMs);
      const code = await exited;
      clearTimeout(timer);
      killGroup(); // helpers the server left (it should leave none)
      return code;
    },
  };
}

/** A port the kernel just handed out on loopback (closed again, so there is a tiny race). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * `signaling/main.ts` in its own process as the systemd unit runs it (node itself, tsx as a
 * loader, so a signal reaches the server), with `env` over this process's environment; HOST is
 * loopback and PORT free unless `env` says otherwise.
 */
export function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  return spawnServerProcess([process.execPath, '--import', 'tsx', 'signaling/main.ts'], { env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env } });
}

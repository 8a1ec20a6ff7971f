import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real engine (redis-server, postgres, nginx) started by a test as a child process. Each one
 * gets a watchdog shell that kills it (and removes its directory) when the test process dies
 * without stopping it, so a crashed or killed test run leaves nothing behind.
 */
export interface EngineProcess {
  readonly pid: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Output so far (stdout and stderr), for error messages. */
  output(): string;
  /** Sends `signal` and resolves when the process has exited (SIGKILL after `graceMs`). */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
  /** Sends a signal and returns (SIGSTOP / SIGCONT to freeze and thaw it). */
  signal(signal: NodeJS.Signals): void;
}

export interface SpawnOptions {
  /** Resolves true once the engine serves; polled until `timeoutMs`. */
  ready(output: string): boolean | Promise<boolean>;
  /** Run as this user (PostgreSQL refuses root). Only applied when the test runs as root. */
  asNobody?: boolean;
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  /** What the watchdog sends when the test process is gone (postgres prefers SIGQUIT). */
  watchdogSignal?: 'KILL' | 'QUIT' | 'TERM';
  /** Removed by the watchdog after the kill, if the test process died first. */
  dir?: string;
}

export const NOBODY = { uid: 65534, gid: 65534 };

/** Where `command` is on PATH (plus `extraDirs`), or undefined: tests that need it skip. */
export function commandPath(command: string, extraDirs: string[] = []): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(':'), ...extraDirs]) {
    if (!dir) continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      // not here
    }
  }
  return undefined;
}

export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/** A fresh temporary directory, owned by `nobody` when the engine will run as nobody. */
export function engineDir(prefix: string, asNobody = false): string {
  const dir = mkdtempSync(join(tmpdir(), `parley-${prefix}-`));
  if (asNobody && runningAsRoot()) chownSync(dir, NOBODY.uid, NOBODY.gid);
  return dir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function spawnEngine(command: string, args: string[], options: SpawnOptions): Promise<EngineProcess> {
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { ...process.env, LC_ALL: 'C', ...options.env },
    ...(options.asNobody && runningAsRoot() ? NOBODY : {}),
  });
  let output = '';
  const append = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => {
      output += `\nspawn failed: ${error.message}`;
      resolve({ code: -1, signal: null });
    });
  });
  if (child.pid === undefined) {
    await exited;
    throw new Error(`${command} did not start: ${output}`);
  }
  startWatchdog(child.pid, options.watchdogSignal ?? 'KILL', options.dir);

  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let gone = false;
  void exited.then(() => (gone = true));
  while (!(await Promise.resolve(options.ready(output)).catch(() => false))) {
    if (gone) throw new Error(`${command} exited before it was ready: ${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${command} was not ready in time: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    pid: child.pid,
    exited,
    output: () => output,
    stop: (signal = 'SIGTERM', graceMs = 10_000) => stopChild(child, exited, signal, graceMs),
    signal: (signal) => void child.kill(signal),
  };
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * A detached shell that polls both processes every 200 ms: when the test process is gone and
 * the engine still runs, it kills the engine; when the engine is gone, it exits.
 */
function startWatchdog(enginePid: number, signal: string, dir: string | undefined): void {
  const script = [
    'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 0.2; done',
    'if kill -0 "$2" 2>/dev/null; then kill -s "$3" "$2"; sleep 2; kill -s KILL "$2" 2>/dev/null; [ -n "$4" ] && rm -rf "$4"; fi',
  ].join('\n');
  const dog = spawn('sh', ['-c', script, 'watchdog', String(process.pid), String(enginePid), signal, dir ?? ''], {
    detached: true,
    stdio: 'ignore',
  });
  dog.unref();
}

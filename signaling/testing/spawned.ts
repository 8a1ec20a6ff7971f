import { spawn, type SpawnOptions } from 'node:child_process';

/** A child process whose output is kept, for tests that run a command as a user or a supervisor would. */
export interface Spawned {
  pid: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first match of `pattern` in stdout; rejects if the process exits first or time runs out. */
  line(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGKILL to its whole process group if anything of it is still running (test cleanup). */
  kill(): void;
}

/** Spawns in a process group of its own (as a supervisor starts a service), output captured. */
export function spawnCaptured(command: string, args: readonly string[], options: SpawnOptions = {}): Spawned {
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const wake = (): void => waiters.forEach((w) => w());
  child.stdout?.on('data', (chunk: Buffer) => ((out += chunk.toString('utf8')), wake()));
  child.stderr?.on('data', (chunk: Buffer) => ((err += chunk.toString('utf8')), wake()));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      wake();
      resolve({ code, signal });
    }),
  );
  const pid = child.pid ?? 0;
  return {
    pid,
    stdout: () => out,
    stderr: () => err,
    exited,
    line(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => finish(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${out}\n${err}`))), timeoutMs);
        const check = (): void => {
          const match = out.match(pattern);
          if (match) finish(() => resolve(match));
          else if (done) finish(() => reject(new Error(`exited before ${pattern}:\n${out}\n${err}`)));
        };
        const finish = (settle: () => void): void => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
    kill() {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    },
  };
}

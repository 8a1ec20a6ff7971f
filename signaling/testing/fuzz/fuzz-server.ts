import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPersistentKey } from '../sql-engines.ts';
import { spawnServerProcess, type ServerProcess } from '../server-process.ts';

/**
 * The server under fuzz: a process of its own (so a crash is that process dying), on a
 * kernel-chosen loopback port, with its own data directory and a persistent key.
 */
export class FuzzServer {
  private constructor(
    private readonly proc: ServerProcess,
    readonly key: string,
    private readonly dataDir: string,
  ) {}

  /** `node --import tsx signaling/main.ts`, or `argv` (e.g. the documented start command). */
  static async start(env: Record<string, string> = {}, argv: string[] = [process.execPath, '--import', 'tsx', 'signaling/main.ts']): Promise<FuzzServer> {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-fuzz-'));
    try {
      const { key } = await createPersistentKey({ DATA_DIR: dataDir }, 'fuzz');
      const proc = await spawnServerProcess(argv, {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', LOCAL_LLM_WORD_DELAY_MS: '0', ...env },
      });
      return new FuzzServer(proc, key, dataDir);
    } catch (error) {
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }
  }

  get url(): string {
    return this.proc.url;
  }

  get wsUrl(): string {
    return `${this.proc.url.replace(/^http/, 'ws')}/ws`;
  }

  get port(): number {
    return Number(new URL(this.proc.url).port);
  }

  /** The process first started (the server, or the start command's first process). */
  get pid(): number {
    return this.proc.child.pid!;
  }

  get exited(): Promise<unknown> {
    return this.proc.exited;
  }

  /** Set once the process ended: its exit code or the signal that ended it. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    const { exitCode, signalCode } = this.proc.child;
    return exitCode === null && signalCode === null ? undefined : { code: exitCode, signal: signalCode };
  }

  /** What the server wrote to stderr (an uncaught exception lands here). */
  stderrTail(chars = 4000): string {
    return this.proc.stderr().slice(-chars);
  }

  /** What it wrote to stdout (its log lines when LOG_LEVEL is set). */
  stdoutTail(chars = 20_000): string {
    return this.proc.stdout().slice(-chars);
  }

  /** SIGTERM (the server drains), the process group killed after `graceMs`; the data directory removed. */
  async stop(graceMs = 8000): Promise<void> {
    await this.proc.stop(graceMs);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

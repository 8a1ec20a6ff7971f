import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KeyStore } from '../keys/key-store.ts';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/**
 * The real server (signaling/main.ts) in a process of its own, on a kernel-chosen loopback port,
 * with its own data directory and a persistent key: a test that must see the process die (a
 * crash, a signal) cannot run the server inside its own process.
 */
export class ServerProcess {
  /** Set when the process ended: its exit code or signal. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly exited: Promise<void>;
  private readonly stderr: string[] = [];
  private stdout = '';

  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    readonly key: string,
    readonly dataDir: string,
    exited: Promise<void>,
    stderr: string[],
  ) {
    this.exited = exited;
    this.stderr = stderr;
  }

  get wsUrl(): string {
    return `${this.url.replace(/^http/, 'ws')}/ws`;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** The last lines the server wrote to stderr (an uncaught exception lands here). */
  stderrTail(chars = 4000): string {
    return this.stderr.join('').slice(-chars);
  }

  /** The last of what the server wrote to stdout (its log lines, with LOG_LEVEL set). */
  stdoutTail(chars = 20_000): string {
    return this.stdout.slice(-chars);
  }

  /**
   * Starts `node --import tsx signaling/main.ts` (or `command` with its arguments, e.g. the
   * documented start command) and resolves once it prints its "listening on" line.
   */
  static async start(env: Record<string, string> = {}, command?: { file: string; args: string[]; detached?: boolean }): Promise<ServerProcess> {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-proc-'));
    const keys = KeyStore.open(dataDir);
    const key = keys.create('fuzz').key;
    keys.close();
    const child = spawn(command?.file ?? process.execPath, command?.args ?? ['--import', 'tsx', 'signaling/main.ts'], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', LOCAL_LLM_WORD_DELAY_MS: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: command?.detached ?? false,
    });
    const stderr: string[] = [];
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr.push(String(chunk));
      if (stderr.length > 400) stderr.splice(0, stderr.length - 400);
    });
    let process_: ServerProcess | undefined;
    const exited = new Promise<void>((done) =>
      child.once('exit', (code, signal) => {
        if (process_) process_.exit = { code, signal };
        done();
      }),
    );
    try {
      const url = await new Promise<string>((ok, fail) => {
        let out = '';
        const timer = setTimeout(() => fail(new Error(`the server did not start within 30 s: ${stderr.join('').slice(-2000)}`)), 30_000);
        child.stdout?.on('data', (chunk: Buffer) => {
          out += String(chunk);
          const m = /listening on (http:\/\/\S+?)\s/.exec(out);
          if (m?.[1]) {
            clearTimeout(timer);
            ok(m[1]);
          }
        });
        child.once('exit', (code, signal) => {
          clearTimeout(timer);
          fail(new Error(`the server exited before listening (${code ?? signal}): ${stderr.join('').slice(-2000)}`));
        });
      });
      process_ = new ServerProcess(child, url, key, dataDir, exited, stderr);
      const started = process_;
      child.stdout?.on('data', (chunk: Buffer) => {
        started.stdout = (started.stdout + String(chunk)).slice(-100_000);
      });
      return process_;
    } catch (error) {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** SIGTERM (the server drains), SIGKILL after `graceMs`; removes the data directory. */
  async stop(graceMs = 8000): Promise<void> {
    if (!this.exit) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

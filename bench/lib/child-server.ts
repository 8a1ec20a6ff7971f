import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { createPersistentKey } from '../../signaling/testing/sql-engines.ts';
import { CLK_TCK } from './load-meter.ts';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const TSX_CLI = join(REPO, 'node_modules/tsx/dist/cli.mjs');

/** Servers not yet stopped; killed on any exit of the bench process, however it happens. */
const live = new Set<ChildServer>();
/** tsx wrappers still starting (server pid unknown yet): SIGTERM, which tsx relays to its child. */
const starting = new Set<number>();
process.once('exit', () => {
  for (const server of live) server.killNow();
  for (const pid of starting) killQuietly(pid, 'SIGTERM');
});

/** What bench/lib/fake-voice-server.ts reports on SIGUSR2, since its previous report (ms). */
export interface ServerTiming {
  /** Event-loop delay. */
  p50: number;
  p99: number;
  max: number;
  /**
   * Send lateness of steady-state downlink frames against their 20 ms slots: the session pacer's
   * on the main thread, or with media workers the workers' RTP pacing (the worst worker).
   */
  pacer: { n: number; p50: number; p99: number; max: number };
  /** With media workers: the session pacer's handoff lateness (absorbed by the workers' lead). */
  handoff?: { n: number; p50: number; p99: number; max: number };
  workers?: number;
  /** GC pauses of the media workers (all of them; the longest). */
  workerGc?: { count: number; maxMs: number };
  /** Garbage-collection pauses on the main thread. */
  gc: { count: number; totalMs: number; maxMs: number };
}

export interface ChildServerOptions {
  /** Extra environment for the server (wins over the bench defaults). */
  env?: Record<string, string>;
  /** Lets `inspect()` attach later (SIGUSR1 on an `--inspect-port=0` process). */
  inspectable?: boolean;
  startTimeoutMs?: number;
  /** Entry script relative to the repo (default `signaling/main.ts`); it must print `listening on <url> `. */
  script?: string;
  /**
   * Start the server already confined to this CPU (taskset), so it sizes itself for one core
   * from the start (os.availableParallelism() is 1 inside), as in a one-CPU container.
   */
  cpu?: number;
  /** Root of the tree to run (default this checkout): a baseline commit's tree (lib/baseline.ts). */
  repo?: string;
}

/**
 * `signaling/main.ts` in a child process (its own event loop and core), on a kernel-chosen
 * loopback port, with its own data directory and a persistent key of account `bench`.
 *
 * tsx's CLI runs the script in a grandchild (`node --import tsx/loader main.ts`) and only relays
 * signals; `pid` is that grandchild, the process that actually serves, so /proc figures are the
 * server's own. BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server there on exit.
 */
export class ChildServer {
  private exited: Promise<void>;
  private exitedFlag = false;
  private inspector: Inspector | undefined;

  private constructor(
    private readonly wrapper: ChildProcess,
    readonly pid: number,
    readonly wsUrl: string,
    readonly apiKey: string,
    private readonly dataDir: string,
    private readonly stderrTail: string[],
    exited: Promise<void>,
    private readonly stdout: NodeJS.ReadableStream | null,
    /** Spawned → its `listening` line read, ms: the whole start-up as an operator sees it (tsx's wrapper included). */
    readonly startMs: number,
  ) {
    this.exited = exited.then(() => {
      this.exitedFlag = true;
    });
  }

  static async start(options: ChildServerOptions = {}): Promise<ChildServer> {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
    let apiKey: string;
    try {
      apiKey = (await createPersistentKey({ DATA_DIR: dataDir }, 'bench')).key;
    } catch (error) {
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }

    // Node flags placed before the script are passed by tsx's CLI to the process that serves.
    const nodeFlags: string[] = [];
    if (options.inspectable) nodeFlags.push('--inspect-port=0');
    if (process.env.BENCH_CPU_PROF) nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`);
    // Extra V8/Node flags for experiments (--trace-gc, heap sizes); figures of such runs are not the server's defaults.
    if (process.env.BENCH_NODE_FLAGS) nodeFlags.push(...process.env.BENCH_NODE_FLAGS.split(/\s+/).filter(Boolean));
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      LLM_PROVIDER: 'local',
      LOCAL_LLM_WORD_DELAY_MS: '0',
      MAX_SESSIONS: '5000',
      DRAIN_TIMEOUT_MS: '2000',
      ...(process.env.BENCH_HEAP_SAMPLE ? { BENCH_HEAP_SAMPLE: process.env.BENCH_HEAP_SAMPLE } : {}),
      ...options.env,
    };
    const argv = [TSX_CLI, ...nodeFlags, options.script ?? 'signaling/main.ts'];
    const spawnedAt = performance.now();
    const wrapper =
      options.cpu === undefined
        ? spawn(process.execPath, argv, { cwd: options.repo ?? REPO, env, stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn('taskset', ['-c', String(options.cpu), process.execPath, ...argv], { cwd: options.repo ?? REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (wrapper.pid !== undefined) starting.add(wrapper.pid);
    const exited = new Promise<void>((done) => wrapper.once('exit', () => done()));
    // BENCH_SERVER_STDOUT=<file> keeps the server's stdout (e.g. --trace-gc lines) for reading after the run.
    if (process.env.BENCH_SERVER_STDOUT) {
      const file = createWriteStream(process.env.BENCH_SERVER_STDOUT, { flags: 'a' });
      wrapper.stdout?.on('data', (chunk: Buffer) => file.write(chunk));
    }
    const stderr: string[] = [];
    wrapper.stderr?.on('data', (chunk: Buffer) => {
      stderr.push(String(chunk));
      if (stderr.length > 200) stderr.splice(0, stderr.length - 200);
    });
    try {
      const url = await new Promise<string>((ok, fail) => {
        let out = '';
        const timer = setTimeout(() => fail(new Error(`server did not print "listening" within ${options.startTimeoutMs ?? 20000} ms`)), options.startTimeoutMs ?? 20000);
        wrapper.stdout?.on('data', (chunk: Buffer) => {
          out += String(chunk);
          const m = /listening on (http:\/\/\S+?)\s/.exec(out);
          if (m?.[1]) {
            clearTimeout(timer);
            ok(m[1]);
          }
        });
        wrapper.once('exit', (code, signal) => {
          clearTimeout(timer);
          fail(new Error(`server exited before listening (code ${code}, signal ${signal}): ${stderr.join('').slice(-2000)}`));
        });
      });
      const startMs = performance.now() - spawnedAt;
      const pid = serverPid(wrapper.pid as number);
      const server = new ChildServer(wrapper, pid, `${url.replace(/^http/, 'ws')}/ws`, apiKey, dataDir, stderr, exited, wrapper.stdout, startMs);
      live.add(server);
      return server;
    } catch (error) {
      killQuietly(wrapper.pid, 'SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    } finally {
      if (wrapper.pid !== undefined) starting.delete(wrapper.pid);
    }
  }

  /** VmRSS of the server process in KiB. */
  rssKb(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    if (!m?.[1]) throw new Error(`no VmRSS for pid ${this.pid}`);
    return Number(m[1]);
  }

  /** User + system CPU time of the server and tsx's wrapper so far, all threads, in ms (10 ms resolution). */
  cpuMs(): number {
    return processCpuMs(this.pid) + (this.wrapper.pid !== undefined && this.wrapper.pid !== this.pid ? processCpuMs(this.wrapper.pid) : 0);
  }

  /**
   * CPU of the server and of every process it started (live ones from /proc, exited ones through
   * the server's cutime/cstime once reaped), in ms: with the local providers this includes the
   * pocketsphinx recognisers and the flite helpers.
   */
  treeCpuMs(): number {
    return treeCpuMs(this.pid);
  }

  /**
   * On-CPU time of the server's main thread (the event loop) so far, in ms, from
   * /proc/<pid>/task/<pid>/schedstat (nanosecond resolution; excludes GC helper and libuv threads).
   */
  mainThreadCpuMs(): number {
    const stat = readFileSync(`/proc/${this.pid}/task/${this.pid}/schedstat`, 'utf8');
    return Number(stat.split(' ')[0]) / 1e6;
  }

  /** The event-loop thread's kernel (system) time, ms, at the clock tick's resolution. */
  mainThreadSystemMs(): number {
    const stat = readFileSync(`/proc/${this.pid}/task/${this.pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is the 3rd, stime the 15th.
    return (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[12]) * 1000) / CLK_TCK;
  }

  /**
   * Event-loop delay of the server since the previous call (ms), for servers started with
   * bench/lib/fake-voice-server.ts, which reports it on SIGUSR2.
   */
  async eventLoopDelay(timeoutMs = 3000): Promise<ServerTiming> {
    const stream = this.stdout;
    if (!stream) throw new Error('no stdout');
    return new Promise((ok, fail) => {
      let buffered = '';
      const onData = (chunk: Buffer): void => {
        buffered += String(chunk);
        const m = /event-loop-delay (\{[^\n]*\})\n/.exec(buffered);
        if (m?.[1]) {
          clearTimeout(timer);
          stream.off('data', onData);
          ok(JSON.parse(m[1]) as ServerTiming);
        }
      };
      const timer = setTimeout(() => {
        stream.off('data', onData);
        fail(new Error('no event-loop-delay report (is the server bench/lib/fake-voice-server.ts?)'));
      }, timeoutMs);
      stream.on('data', onData);
      process.kill(this.pid, 'SIGUSR2');
    });
  }

  /**
   * Time the server's main thread spent runnable but waiting for a CPU so far, in ms (second
   * field of /proc/<pid>/task/<pid>/schedstat): how much other processes starved it.
   */
  mainThreadRunQueueMs(): number {
    const stat = readFileSync(`/proc/${this.pid}/task/${this.pid}/schedstat`, 'utf8');
    return Number(stat.split(' ')[1]) / 1e6;
  }

  /** Attaches the V8 inspector (needs `inspectable`). Do it before the baseline reading. */
  async inspect(): Promise<Inspector> {
    if (this.inspector) return this.inspector;
    process.kill(this.pid, 'SIGUSR1');
    const deadline = Date.now() + 5000;
    for (;;) {
      const m = /Debugger listening on (ws:\/\/\S+)/.exec(this.stderrTail.join(''));
      if (m?.[1]) {
        this.inspector = await Inspector.connect(m[1]);
        return this.inspector;
      }
      if (Date.now() > deadline) throw new Error('inspector did not start (was the server started with inspectable?)');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** SIGTERM (graceful drain, writes the CPU profile), SIGKILL if it overruns; removes the data dir. */
  async stop(): Promise<void> {
    this.inspector?.close();
    if (!this.exitedFlag) {
      killQuietly(this.pid, 'SIGTERM');
      const timer = setTimeout(() => {
        killQuietly(this.pid, 'SIGKILL');
        killQuietly(this.wrapper.pid, 'SIGKILL');
      }, 8000);
      await this.exited;
      clearTimeout(timer);
    }
    live.delete(this);
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** Last resort (process exit handlers): synchronous kill of both processes. */
  killNow(): void {
    if (this.exitedFlag) return;
    killQuietly(this.pid, 'SIGKILL');
    killQuietly(this.wrapper.pid, 'SIGKILL');
  }
}

/** utime+stime (+cutime+cstime with `reaped`) of one process, in ms; 0 once it is gone. */
export function processCpuMs(pid: number, reaped = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    const children = reaped ? Number(fields[13]) + Number(fields[14]) : 0;
    return ((own + children) * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** A process and all its descendants, live and reaped, in ms. */
export function treeCpuMs(pid: number): number {
  let total = processCpuMs(pid, true);
  for (const child of childPids(pid)) total += treeCpuMs(child);
  return total;
}

function childPids(pid: number): number[] {
  try {
    const out: number[] = [];
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (list) out.push(...list.split(/\s+/).map(Number));
    }
    return out;
  } catch {
    return [];
  }
}

/** The process that serves: tsx's grandchild if the CLI spawned one, else the child itself. */
function serverPid(wrapperPid: number): number {
  try {
    const children = readFileSync(`/proc/${wrapperPid}/task/${wrapperPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    if (children.length === 1) return Number(children[0]);
  } catch {
    // not Linux or already gone: fall through
  }
  return wrapperPid;
}

function killQuietly(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Minimal Chrome DevTools Protocol client for a forced GC and a memoryUsage() reading. */
export class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (msg.id === undefined) return;
      const waiter = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) waiter?.fail(new Error(msg.error.message));
      else waiter?.ok(msg.result);
    });
  }

  static async connect(url: string): Promise<Inspector> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    return new Inspector(ws);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((ok, fail) => {
      this.pending.set(id, { ok, fail });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  async collectGarbage(): Promise<void> {
    await this.call('HeapProfiler.collectGarbage');
  }

  async memoryUsage(): Promise<NodeJS.MemoryUsage> {
    const result = (await this.call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    })) as { result: { value: string } };
    return JSON.parse(result.result.value) as NodeJS.MemoryUsage;
  }

  close(): void {
    this.ws.close();
  }
}

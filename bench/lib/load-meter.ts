import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** Linux USER_HZ: the unit of /proc/stat and /proc/<pid>/stat times (getconf CLK_TCK). */
export const CLK_TCK = 100;

/** Busy CPU time of the whole machine so far (all cores, steal included), in ms. */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  // cpu user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
  return (busy * 1000) / CLK_TCK;
}

function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Accumulates, over begin/end windows, the CPU used by this process (the load generator) and by
 * everything on the machine other than this process and the server under test. A shared machine
 * (tests, builds) inflates latency figures; `foreignCores` says how much that happened.
 * /proc/stat ticks are 10 ms, so short windows are coarse.
 */
export class LoadMeter {
  private wallMs = 0;
  private clientMs = 0;
  private foreignMs = 0;
  private start: { wall: number; client: number; server: number; machine: number } | undefined;

  constructor(private readonly serverCpuMs: () => number) {}

  begin(): void {
    this.start = { wall: performance.now(), client: ownCpuMs(), server: this.serverCpuMs(), machine: machineBusyMs() };
  }

  end(): void {
    const s = this.start;
    if (!s) return;
    this.start = undefined;
    const client = ownCpuMs() - s.client;
    const server = this.serverCpuMs() - s.server;
    this.wallMs += performance.now() - s.wall;
    this.clientMs += client;
    this.foreignMs += machineBusyMs() - s.machine - client - server;
  }

  /** Load generator CPU, in cores (1 = one core fully busy). */
  get clientCores(): number {
    return this.wallMs > 0 ? this.clientMs / this.wallMs : 0;
  }

  /** CPU used by other processes on the machine, in cores; ~0 on a quiet machine. */
  get foreignCores(): number {
    return this.wallMs > 0 ? Math.max(0, this.foreignMs / this.wallMs) : 0;
  }
}

/**
 * Waits until `cpuMs` (e.g. a server's process-tree CPU) advances less than `quietMs` per
 * `windowMs` window: a server that warms helpers up after it starts listening (recogniser and
 * synthesiser processes) must be quiet before anything is measured. Resolves with the time
 * waited; gives up (without failing) after `maxMs`.
 */
export async function waitForQuiet(cpuMs: () => number, { windowMs = 500, quietMs = 20, maxMs = 15000 } = {}): Promise<number> {
  const start = performance.now();
  let last = cpuMs();
  while (performance.now() - start < maxMs) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = cpuMs();
    if (now - last < quietMs) break;
    last = now;
  }
  return performance.now() - start;
}

/**
 * Waits, at most `maxWaitMs`, for a 1 s window in which processes other than ours (this process
 * plus `othersOfOursCpuMs`: servers, peer processes) use less than `cores`. A shared machine
 * (someone's test run) otherwise decides a jitter figure. Returns the last window's foreign cores.
 */
export async function waitForQuietMachine(othersOfOursCpuMs: () => number, cores = 0.3, maxWaitMs = 15000): Promise<number> {
  const deadline = performance.now() + maxWaitMs;
  for (;;) {
    const t0 = performance.now();
    const m0 = machineBusyMs();
    const o0 = ownCpuMs() + othersOfOursCpuMs();
    await new Promise((r) => setTimeout(r, 1000));
    const foreign = Math.max(0, (machineBusyMs() - m0 - (ownCpuMs() + othersOfOursCpuMs() - o0)) / (performance.now() - t0));
    if (foreign < cores || performance.now() > deadline) return foreign;
  }
}

import { performance } from 'node:perf_hooks';
import { waitForQuietMachine } from './load-meter.ts';
import { progress, round } from './stats.ts';

/** What a load step must report for the ramp to judge it. */
export interface StepFigures {
  p99: number;
  /** CPU of processes other than the bench's own during the window, in cores. */
  foreignCores: number;
  /** The server's event-loop thread, in cores. */
  mainCores: number;
  /** Share of the window that thread was runnable but waiting for a CPU. */
  runQueue?: number;
  /** The server's own pacer send lateness p99 over the window, when known. */
  serverPacerP99?: number;
  /** p99 and other-process load of every window tried at this step (filled by measureStep). */
  windows?: Array<{ p99: number; foreign: number }>;
}

/**
 * The server's event loop never idles: running or waiting to run for over 95 % of the window
 * (or running over 90 %). Waiting counts: work that waits for a CPU is still work queued.
 */
export function saturated(step: StepFigures): boolean {
  return step.mainCores > 0.9 || step.mainCores + (step.runQueue ?? 0) > 0.95;
}

/** Other processes above this during a window: the window says more about them than about us. */
export const BUSY_CORES = 0.15;

/**
 * Measures one load step on a shared machine: waits (bounded) for a quiet second, measures a
 * window, and measures again (at most `attempts` windows) only when a window missed the target
 * while other processes were busy. A window that misses the target on a quiet machine is final.
 * The best window is kept and every window is listed in the row.
 */
export async function measureStep<T extends StepFigures>(
  label: string,
  target: number,
  oursCpuMs: () => number,
  measure: () => Promise<T>,
  attempts = 3,
  quietWaitMs = 10000,
): Promise<T> {
  let best: T | undefined;
  const windows: Array<{ p99: number; foreign: number }> = [];
  for (let i = 0; i < attempts; i += 1) {
    await waitForQuietMachine(oursCpuMs, 0.3, quietWaitMs);
    const m = await measure();
    windows.push({ p99: m.p99, foreign: m.foreignCores });
    progress(
      `${label}: window ${i + 1}: client-side jitter p99 ${round(m.p99, 1)} ms${m.serverPacerP99 === undefined ? '' : `, server pacer lateness p99 ${m.serverPacerP99} ms`}, ` +
        `server event loop ${round(m.mainCores, 2)} cores, other processes ${round(m.foreignCores, 2)} cores`,
    );
    if (!best || m.p99 < best.p99) best = m;
    if (m.p99 < target || m.foreignCores <= BUSY_CORES || saturated(m)) break;
  }
  const kept = best as T;
  kept.windows = windows;
  return kept;
}

/** Why a ramp stopped at a step that missed the target. */
export function missReason(n: number, unit: string, target: number, step: StepFigures): string {
  const windows = step.windows ?? [];
  const server = step.serverPacerP99 === undefined ? '' : ` (the server's own pacer send lateness p99 ${step.serverPacerP99} ms)`;
  if (saturated(step)) {
    return (
      `stopped at ${n} ${unit}: the server's event loop is saturated (running ${Math.round(step.mainCores * 100)} % of the window, ` +
      `runnable but waiting for a CPU ${Math.round((step.runQueue ?? 0) * 100)} %)${server}`
    );
  }
  if (windows.length > 0 && windows.every((w) => w.foreign > BUSY_CORES)) {
    return (
      `stopped at ${n} ${unit}, INCONCLUSIVE: every window missed ${target} ms while other processes used ${windows.map((w) => round(w.foreign, 2)).join(' / ')} cores ` +
      `of the 2 and the server's event loop only ${round(step.mainCores, 2)} cores${server}`
    );
  }
  return `stopped at ${n} ${unit}: client-side jitter p99 over ${target} ms on a quiet window${server}`;
}

export function windowsNote(step: StepFigures): string {
  const w = step.windows ?? [];
  if (w.length <= 1) return '';
  return `; windows tried (p99 ms @ other-process cores): ${w.map((x) => `${round(x.p99, 2)} @ ${round(x.foreign, 2)}`).join(', ')}, the best kept`;
}

/** A deadline for a whole ramp, so a busy machine cannot stretch the run without bound. */
export function budget(ms: number): () => boolean {
  const end = performance.now() + ms;
  return () => performance.now() > end;
}

export interface RampOptions<T extends StepFigures & { n: number }> {
  label: string;
  /** "sessions", "calls". */
  unit: string;
  steps: readonly number[];
  target: number;
  budgetMs: number;
  settleMs: number;
  /** Brings the load up to n (sessions or calls open and streaming). */
  grow(n: number): Promise<void>;
  /** CPU of the bench's own helper processes (server, peers), for the quiet-machine wait. */
  oursCpuMs(): number;
  measure(n: number): Promise<T>;
  /** A reason to stop that is not the server's (e.g. the load generator saturated). */
  extraStop?(step: T): string | undefined;
  /**
   * Steps still taken after the limit was found (one window each), so CPU per unit has more than
   * one point; they never change the capacity verdict.
   */
  cpuStepsAfterLimit?: number;
}

export interface RampResult<T> {
  steps: T[];
  /** Why the ramp ended. */
  stopReason: string;
  /** True when it ended on a real miss (quiet machine or saturated server), not noise or time. */
  limitFound: boolean;
  /** Steps that missed the target only while the machine was busy (the ramp went on past them). */
  inconclusive: string[];
  /** Load of the step that found the limit (steps above it were for CPU figures only). */
  limitAt?: number;
}

/**
 * Steps the load up. A step that misses the target on a quiet window (or with the server's event
 * loop saturated) ends the ramp: that is the limit. A step that missed only while other
 * processes were busy is recorded as inconclusive and the ramp goes on, so the CPU figures of
 * larger steps are still taken; the time budget bounds the whole.
 */
export async function ramp<T extends StepFigures & { n: number }>(o: RampOptions<T>): Promise<RampResult<T>> {
  const overBudget = budget(o.budgetMs);
  const steps: T[] = [];
  const inconclusive: string[] = [];
  let limit: { reason: string; n: number } | undefined;
  let extra = o.cpuStepsAfterLimit ?? 0;
  const done = (stopReason: string, limitFound: boolean): RampResult<T> => ({ steps, stopReason, limitFound, inconclusive, ...(limit ? { limitAt: limit.n } : {}) });
  for (const n of o.steps) {
    if (limit && extra-- <= 0) break;
    progress(`${o.label}: ${n} ${o.unit}${limit ? ' (past the limit: CPU figures only)' : ''}`);
    await o.grow(n);
    await new Promise((r) => setTimeout(r, o.settleMs));
    const step = await measureStep(`${o.label}: ${n} ${o.unit}`, o.target, o.oursCpuMs, () => o.measure(n), limit ? 1 : 3);
    steps.push(step);
    if (saturated(step)) {
      limit ??= { reason: missReason(n, o.unit, o.target, step), n };
      return done(limit.reason, true);
    }
    if (!limit && step.p99 >= o.target) {
      const why = missReason(n, o.unit, o.target, step);
      if (why.includes('INCONCLUSIVE')) inconclusive.push(why);
      else limit = { reason: why, n };
    }
    const other = o.extraStop?.(step);
    if (other) return done(limit ? `${limit.reason}; then ${other}` : other, limit !== undefined);
    if (overBudget()) {
      const budgetReason = `the ramp's time budget (${o.budgetMs / 1000} s) ran out after ${n} ${o.unit}`;
      return done(limit ? `${limit.reason}; ${budgetReason}` : `stopped: ${budgetReason}`, limit !== undefined);
    }
  }
  if (limit) return done(`${limit.reason}${steps.at(-1)!.n > limit.n ? ` (larger steps taken for CPU figures only)` : ''}`, true);
  return done(`every step up to ${o.steps.at(-1)} ${o.unit} was measured`, false);
}

/** CPU per unit of load and the capacity verdict, from a ramp's steps. */
export function rampVerdict<T extends StepFigures & { n: number; serverCores: number }>(result: RampResult<T>, target: number): {
  perUnitMs: number;
  marginalMs: number;
  at: T;
  capacity: string;
  detail: string;
} {
  const { steps } = result;
  const last = steps.at(-1) as T;
  const first = steps[0] as T;
  const perUnitMs = (last.serverCores * 1000) / last.n;
  const marginalMs = steps.length > 1 ? ((last.serverCores - first.serverCores) * 1000) / (last.n - first.n) : perUnitMs;
  const passing = steps.filter((s) => s.p99 < target && !saturated(s) && (result.limitAt === undefined || s.n < result.limitAt));
  const best = passing.at(-1);
  let capacity: string;
  if (!best) capacity = result.limitFound ? `< ${first.n}` : 'inconclusive';
  else if (result.limitFound) capacity = String(best.n);
  else capacity = `≥ ${best.n}`;
  const detail =
    `${result.stopReason}` +
    (result.inconclusive.length ? `; missed only on a busy machine (ramp went on): ${result.inconclusive.map((w) => /at (\d+)/.exec(w)?.[1]).join(', ')}` : '') +
    `; steps measured ${steps.map((s) => `${s.n} (p99 ${round(s.p99, 2)} ms)`).join(', ')}`;
  return { perUnitMs, marginalMs, at: last, capacity, detail };
}

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeSessions, openSessions, type BenchSession } from './lib/bench-client.ts';
import { ChildServer } from './lib/child-server.ts';
import { LoadMeter, waitForQuiet } from './lib/load-meter.ts';
import { median, percentile, progress, round } from './lib/stats.ts';
import type { Row } from './types.ts';

/**
 * Server-added latency of the text path: input_text sent → first text_delta received, with the
 * local model at LOCAL_LLM_WORD_DELAY_MS=0 (its first word is yielded at once), at 1, 100 and
 * 1000 concurrent text sessions on one server process; plus memory per idle session.
 *
 * The server runs in a child process (its own event loop and core); timing is done here with
 * performance.now(), so every latency is client-observed on loopback: an upper bound of the
 * server-added latency. A set_voice → voice round trip (no model involved) under the same
 * sessions and load shape is the baseline for loopback, ws framing and frame parsing; the
 * difference of the p50s estimates what the model path itself adds.
 */

export const name = 'text-latency';

const INPUT = 'hello';
const SEQUENTIAL_WARMUP = 50;
const SEQUENTIAL_SAMPLES = 500;
const CONCURRENT_SAMPLES = 2000;
/** Each session sends once per round; the sends of a round are spread uniformly over it. */
const ROUND_SPREAD_MS = 1000;
const CONCURRENCY = [1, 100, 1000] as const;
const BURST_AT = 1000;
const IDLE_SESSIONS = 1000;
const SETTLE_MS = 2000;

interface Measured {
  text: number[];
  voice: number[];
  /** Event-loop thread CPU ms spent in the measured text (resp. voice) rounds. */
  textCpuMs: number;
  voiceCpuMs: number;
  /** CPU of the load generator and of unrelated processes during the measured text rounds. */
  load: LoadMeter;
  burst?: number[];
}

export async function run(): Promise<Row[]> {
  const memory = await measureIdleMemory();
  const latency = await measureLatency();
  return [...latency, ...memory];
}

// ---------------------------------------------------------------------------------------------
// Latency

async function measureLatency(): Promise<Row[]> {
  progress('text-latency: starting server child for latency');
  const server = await ChildServer.start();
  const results = new Map<number, Measured>();
  try {
    progress(`text-latency: server pid ${server.pid} at ${server.wsUrl}`);
    await settleAfterStart(server);
    for (const n of CONCURRENCY) {
      const started = performance.now();
      progress(`text-latency: opening ${n} session(s)`);
      const sessions = await openSessions(server.wsUrl, server.apiKey, n, `bench-n${n}`);
      try {
        results.set(n, n === 1 ? await sequential(server, sessions[0] as BenchSession) : await rounds(server, sessions, n === BURST_AT));
      } finally {
        await closeSessions(sessions);
      }
      progress(`text-latency: ${n} session(s) done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    await server.stop();
  }
  return latencyRows(results);
}

/** One session, request after request: the unloaded figure. */
async function sequential(server: ChildServer, session: BenchSession): Promise<Measured> {
  for (let i = 0; i < SEQUENTIAL_WARMUP; i += 1) {
    await session.text(INPUT);
    await session.setVoice();
  }
  const text: number[] = [];
  const voice: number[] = [];
  let textCpuMs = 0;
  let voiceCpuMs = 0;
  // One window over the whole phase: /proc/stat's 10 ms ticks make short windows meaningless.
  const load = new LoadMeter(() => server.treeCpuMs());
  load.begin();
  // Alternate blocks so drift (GC, JIT, history growth) affects both kinds alike.
  for (let block = 0; block < SEQUENTIAL_SAMPLES / 50; block += 1) {
    let cpu = server.mainThreadCpuMs();
    for (let i = 0; i < 50; i += 1) text.push(await session.text(INPUT));
    textCpuMs += server.mainThreadCpuMs() - cpu;
    cpu = server.mainThreadCpuMs();
    for (let i = 0; i < 50; i += 1) voice.push(await session.setVoice());
    voiceCpuMs += server.mainThreadCpuMs() - cpu;
  }
  load.end();
  return { text, voice, textCpuMs, voiceCpuMs, load };
}

/** N sessions: a warm-up round of each kind, then alternating text and set_voice rounds. */
async function rounds(server: ChildServer, sessions: readonly BenchSession[], burst: boolean): Promise<Measured> {
  const n = sessions.length;
  const count = Math.ceil(CONCURRENT_SAMPLES / n);
  progress(`text-latency: ${n} sessions: warm-up round, then ${count} text + ${count} set_voice rounds (sends spread over ${ROUND_SPREAD_MS} ms)`);
  await round1(sessions, 'text', ROUND_SPREAD_MS);
  await round1(sessions, 'voice', ROUND_SPREAD_MS);
  const out: Measured = { text: [], voice: [], textCpuMs: 0, voiceCpuMs: 0, load: new LoadMeter(() => server.treeCpuMs()) };
  for (let r = 0; r < count; r += 1) {
    let cpu = server.mainThreadCpuMs();
    out.load.begin();
    out.text.push(...(await round1(sessions, 'text', ROUND_SPREAD_MS)));
    out.load.end();
    out.textCpuMs += server.mainThreadCpuMs() - cpu;
    cpu = server.mainThreadCpuMs();
    out.voice.push(...(await round1(sessions, 'voice', ROUND_SPREAD_MS)));
    out.voiceCpuMs += server.mainThreadCpuMs() - cpu;
  }
  if (burst) {
    progress(`text-latency: ${n} sessions: burst rounds (all sends in one tick)`);
    await round1(sessions, 'text', 0);
    out.burst = [];
    for (let r = 0; r < count; r += 1) out.burst.push(...(await round1(sessions, 'text', 0)));
  }
  return out;
}

/**
 * Every session sends one request, in random order, at offsets spread uniformly (stratified
 * jitter) over `spreadMs`; 0 sends all in the same tick. Resolves with every latency once each
 * session's reply is complete.
 */
export async function round1(sessions: readonly BenchSession[], kind: 'text' | 'voice', spreadMs: number): Promise<number[]> {
  const n = sessions.length;
  const order = shuffle(sessions);
  const offsets = order.map((_, i) => ((i + Math.random()) * spreadMs) / n);
  const pending: Promise<number>[] = [];
  const fire = (s: BenchSession): void => {
    const p = kind === 'text' ? s.text(INPUT) : s.setVoice();
    p.catch(() => undefined); // rejections surface through Promise.all below
    pending.push(p);
  };
  const t0 = performance.now();
  await new Promise<void>((done) => {
    let i = 0;
    const tick = (): void => {
      const elapsed = performance.now() - t0;
      while (i < n && (offsets[i] as number) <= elapsed) fire(order[i++] as BenchSession);
      if (i >= n) return done();
      setTimeout(tick, Math.max(0, (offsets[i] as number) - elapsed));
    };
    tick();
  });
  return Promise.all(pending);
}

function shuffle<T>(items: readonly T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

function latencyRows(results: Map<number, Measured>): Row[] {
  const rows: Row[] = [];
  const row = (metric: string, value: number, unit: string, note: string): void => {
    rows.push({ benchmark: name, metric, value, unit, note });
  };
  const upperBound = 'client-observed on loopback: upper bound of server-added latency (includes loopback and client parse)';
  for (const [n, m] of results) {
    const sessions = `${n} session${n === 1 ? '' : 's'}`;
    const load =
      n === 1
        ? `${m.text.length} sequential turns after ${SEQUENTIAL_WARMUP} warm-up`
        : `${m.text.length} samples; each session sends 1 input_text per ${ROUND_SPREAD_MS} ms round, staggered uniformly (${n} turns/s); 1 warm-up round discarded`;
    const p50 = percentile(m.text, 50);
    const p99 = percentile(m.text, 99);
    const targetP50 = n === 1 ? 'target < 1 ms; ' : '';
    const targetP99 = n === 1000 ? 'target < 10 ms; ' : '';
    if (busyWarning(m.load)) progress(`text-latency: WARNING: other processes used ${m.load.foreignCores.toFixed(2)} cores during the ${sessions} rounds`);
    row(`input_text → first text_delta p50, ${sessions}`, round(p50), 'ms', `${targetP50}${upperBound}; ${load}${busyWarning(m.load)}`);
    row(
      `input_text → first text_delta p99, ${sessions}`,
      round(p99),
      'ms',
      `${targetP99}${upperBound}; max ${round(Math.max(...m.text))} ms; meanwhile the load generator used ${m.load.clientCores.toFixed(2)} cores and other processes ${m.load.foreignCores.toFixed(2)} cores${busyWarning(m.load)}`,
    );
    const b50 = percentile(m.voice, 50);
    const b99 = percentile(m.voice, 99);
    row(
      `model path server-added p50 (est.), ${sessions}`,
      round(p50 - b50),
      'ms',
      `first text_delta p50 minus baseline set_voice→voice RTT p50 (${round(b50)} ms; p99 ${round(b99)} ms) over the same sessions and load shape`,
    );
    const perText = (m.textCpuMs * 1000) / m.text.length;
    const perVoice = (m.voiceCpuMs * 1000) / m.voice.length;
    row(
      `server event-loop CPU per text turn, ${sessions}`,
      Math.round(perText),
      'µs',
      `whole turn (asr, turn, one text_delta per word, utterance, done); set_voice costs ${Math.round(perVoice)} µs; from /proc/<pid>/task/<pid>/schedstat of the server's main thread`,
    );
    if (m.burst) {
      row(
        `burst: input_text → first text_delta p50, ${sessions}`,
        round(percentile(m.burst, 50)),
        'ms',
        `informative, no target: all ${n} sessions send in the same tick (worst case, not a realistic arrival); ${m.burst.length} samples`,
      );
      row(
        `burst: input_text → first text_delta p99, ${sessions}`,
        round(percentile(m.burst, 99)),
        'ms',
        'informative, no target: ≈ time for the server to work through the whole burst',
      );
    }
  }
  return rows;
}

/** The server warms helper processes up after it listens; nothing is measured until they idle. */
export async function settleAfterStart(server: ChildServer): Promise<void> {
  const waited = await waitForQuiet(() => server.treeCpuMs());
  progress(`text-latency: server process tree quiet after ${(waited / 1000).toFixed(1)} s`);
}

// ---------------------------------------------------------------------------------------------
// Memory

async function measureIdleMemory(): Promise<Row[]> {
  progress('text-latency: starting a fresh server child for idle memory');
  const server = await ChildServer.start({ inspectable: true });
  let sessions: BenchSession[] = [];
  try {
    await settleAfterStart(server);
    // Attach the inspector before the first reading so its own footprint is in both.
    const inspector = await server.inspect();
    // One full session first, so one-time costs (lazy modules, first-use JIT) are in the baseline.
    const warm = await openSessions(server.wsUrl, server.apiKey, 1, 'bench-warm');
    await warm[0]?.text(INPUT);
    await warm[0]?.setVoice();
    await closeSessions(warm);

    const rss0 = await settledRss(server);
    await inspector.collectGarbage();
    const gc0 = { rss: server.rssKb(), mem: await inspector.memoryUsage() };

    progress(`text-latency: opening ${IDLE_SESSIONS} idle sessions`);
    sessions = await openSessions(server.wsUrl, server.apiKey, IDLE_SESSIONS, 'bench-idle');
    const rssN = await settledRss(server);
    await inspector.collectGarbage();
    const gcN = { rss: server.rssKb(), mem: await inspector.memoryUsage() };

    const perSession = (a: number, b: number): number => (b - a) / IDLE_SESSIONS;
    return [
      {
        benchmark: name,
        metric: 'resident memory per idle text session',
        value: round(perSession(rss0, rssN), 1),
        unit: 'KB',
        note:
          `target < 200 KB; (VmRSS at ${IDLE_SESSIONS} idle − at 0) / ${IDLE_SESSIONS}, each the median of 3 readings after a ${SETTLE_MS / 1000} s settle, ` +
          `no forced GC (uncollected garbage at either reading moves this by a few KB/session): ${rss0} → ${rssN} KB`,
      },
      {
        benchmark: name,
        metric: 'resident memory per idle text session, after forced GC',
        value: round(perSession(gc0.rss, gcN.rss), 1),
        unit: 'KB',
        note: `target < 200 KB; same, each reading right after a full GC through the V8 inspector: ${gc0.rss} → ${gcN.rss} KB`,
      },
      {
        benchmark: name,
        metric: 'JS heap per idle text session',
        value: round(perSession(gc0.mem.heapUsed, gcN.mem.heapUsed) / 1024, 1),
        unit: 'KB',
        note:
          `heapUsed after a forced GC (V8 inspector, HeapProfiler.collectGarbage) at 0 and ${IDLE_SESSIONS} idle sessions: ` +
          `${kb(gc0.mem.heapUsed)} → ${kb(gcN.mem.heapUsed)} KB; external+arrayBuffers ${round(perSession(gc0.mem.external + gc0.mem.arrayBuffers, gcN.mem.external + gcN.mem.arrayBuffers) / 1024, 1)} KB/session`,
      },
    ];
  } finally {
    await closeSessions(sessions);
    await server.stop();
  }
}

/** Median of 3 VmRSS readings, 300 ms apart, after the settle time. */
async function settledRss(server: ChildServer): Promise<number> {
  await sleep(SETTLE_MS);
  const readings: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    if (i > 0) await sleep(300);
    readings.push(server.rssKb());
  }
  return median(readings);
}

/** Flags figures taken while something else loaded the machine. */
export function busyWarning(load: LoadMeter): string {
  return load.foreignCores > 0.15 ? ' (MACHINE BUSY: figures inflated; rerun on a quiet machine)' : '';
}

function kb(bytes: number): number {
  return Math.round(bytes / 1024);
}

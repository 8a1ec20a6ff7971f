import { performance } from 'node:perf_hooks';
import { closeSessions, openSessions, type BenchSession } from './lib/bench-client.ts';
import { ChildServer } from './lib/child-server.ts';
import { LoadMeter } from './lib/load-meter.ts';
import { percentile, progress, round } from './lib/stats.ts';
import { busyWarning, round1, settleAfterStart } from './text-latency.ts';
import type { Row } from './types.ts';

/**
 * The text path on the production adapters (issue 19): LLM_PROVIDER=openai against the fake
 * OpenAI-compatible server in its own process (bench/lib/fake-openai-process.ts: the local
 * model's words, one SSE chunk each), side by side with the local model in the same run: two
 * server children, measured in alternating blocks so drift and machine load hit both alike.
 *
 * Sessions are renewed every TURNS_PER_SESSION turns: the adapter path serialises the whole
 * history into every request (as a real model needs), so hundreds of turns in one session would
 * measure JSON.stringify of an unrealistic history instead of the HTTP path.
 */

export const name = 'text-adapter';

const INPUT = 'hello';
const TURNS_PER_SESSION = 20;
const SEQUENTIAL_BLOCKS = 12;
const CONCURRENT = 1000;
const CONCURRENT_ROUNDS = 2;
const SATURATION_SESSIONS = 100;
const SATURATION_MS = 4000;

type PathName = 'local' | 'adapter';

interface PathFigures {
  seq: number[];
  seqVoice: number[];
  seqCpuMs: number;
  conc: number[];
  concCpuMs: number;
  concLoad: LoadMeter;
  satTurns: number;
  satMs: number;
  satCpuMs: number;
}

export async function run(): Promise<Row[]> {
  progress('text-adapter: starting the fake OpenAI-compatible server and two servers (local, adapter)');
  const fake = await ChildServer.start({ script: 'bench/lib/fake-openai-process.ts' });
  const baseUrl = fake.wsUrl.replace(/^ws/, 'http').replace(/\/ws$/, '');
  const servers: Record<PathName, ChildServer> = {
    local: await ChildServer.start(),
    adapter: await ChildServer.start({ env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: baseUrl, LLM_API_KEY: 'sk-bench' } }),
  };
  try {
    for (const s of Object.values(servers)) await settleAfterStart(s);
    const figures: Record<PathName, PathFigures> = { local: empty(servers.local), adapter: empty(servers.adapter) };
    for (let block = 0; block < SEQUENTIAL_BLOCKS; block += 1) {
      for (const path of order(block)) await sequentialBlock(servers[path], figures[path], block === 0);
    }
    progress(`text-adapter: ${CONCURRENT} sessions per path, ${CONCURRENT_ROUNDS} measured rounds each, alternating`);
    const sessions = { local: await openSessions(servers.local.wsUrl, servers.local.apiKey, CONCURRENT, 'ta-l'), adapter: await openSessions(servers.adapter.wsUrl, servers.adapter.apiKey, CONCURRENT, 'ta-a') };
    try {
      for (const path of ['local', 'adapter'] as const) await round1(sessions[path], 'text', 1000); // warm-up
      for (let r = 0; r < CONCURRENT_ROUNDS; r += 1) {
        for (const path of order(r)) {
          const f = figures[path];
          const cpu = servers[path].mainThreadCpuMs();
          f.concLoad.begin();
          f.conc.push(...(await round1(sessions[path], 'text', 1000)));
          f.concLoad.end();
          f.concCpuMs += servers[path].mainThreadCpuMs() - cpu;
        }
      }
    } finally {
      await closeSessions([...sessions.local, ...sessions.adapter]);
    }
    for (let r = 0; r < 2; r += 1) for (const path of order(r)) await saturate(servers[path], figures[path]);
    return rows(figures.local, figures.adapter);
  } finally {
    await Promise.all([servers.local.stop(), servers.adapter.stop(), fake.stop()]);
  }
}

function empty(server: ChildServer): PathFigures {
  return { seq: [], seqVoice: [], seqCpuMs: 0, conc: [], concCpuMs: 0, concLoad: new LoadMeter(() => server.treeCpuMs()), satTurns: 0, satMs: 0, satCpuMs: 0 };
}

/** Alternates which path goes first, so neither always runs right after the other's load. */
function order(i: number): PathName[] {
  return i % 2 === 0 ? ['local', 'adapter'] : ['adapter', 'local'];
}

/** A fresh session: 3 unmeasured turns, then TURNS_PER_SESSION measured ones and as many set_voice. */
async function sequentialBlock(server: ChildServer, f: PathFigures, warm: boolean): Promise<void> {
  const [session] = await openSessions(server.wsUrl, server.apiKey, 1, 'ta-seq');
  const s = session as BenchSession;
  try {
    for (let i = 0; i < (warm ? 30 : 3); i += 1) await s.text(INPUT);
    const cpu = server.mainThreadCpuMs();
    for (let i = 0; i < TURNS_PER_SESSION; i += 1) f.seq.push(await s.text(INPUT));
    f.seqCpuMs += server.mainThreadCpuMs() - cpu;
    for (let i = 0; i < TURNS_PER_SESSION; i += 1) f.seqVoice.push(await s.setVoice());
  } finally {
    await closeSessions([s]);
  }
}

/** Closed loop: each session sends its next turn as soon as the last one is done. */
async function saturate(server: ChildServer, f: PathFigures): Promise<void> {
  const sessions = await openSessions(server.wsUrl, server.apiKey, SATURATION_SESSIONS, 'ta-sat');
  try {
    let turns = 0;
    let stop = false;
    const cpu = server.mainThreadCpuMs();
    const t0 = performance.now();
    const loops = sessions.map(async (s) => {
      for (let n = 0; !stop; n += 1) {
        await s.text(INPUT);
        turns += 1;
      }
    });
    await new Promise((r) => setTimeout(r, SATURATION_MS));
    stop = true;
    const elapsed = performance.now() - t0;
    f.satCpuMs += server.mainThreadCpuMs() - cpu;
    f.satTurns += turns;
    f.satMs += elapsed;
    await Promise.all(loops);
  } finally {
    await closeSessions(sessions);
  }
}

function rows(local: PathFigures, adapter: PathFigures): Row[] {
  const out: Row[] = [];
  const row = (metric: string, value: number, unit: string, note: string): void => void out.push({ benchmark: name, metric, value, unit, note });
  const cpuTurn = (f: PathFigures): number => (f.seqCpuMs * 1000) / f.seq.length;
  const concCpuTurn = (f: PathFigures): number => (f.concCpuMs * 1000) / f.conc.length;
  const sideBySide = `side by side in one run: two server children (local model; openai adapter → fake server in a third process), alternating blocks of ${TURNS_PER_SESSION} turns on fresh sessions`;
  row('adapter path: server CPU per text turn, 1 session', Math.round(cpuTurn(adapter)), 'µs', `target ≤ 2× local; local path ${Math.round(cpuTurn(local))} µs in the same run (ratio ${round(cpuTurn(adapter) / cpuTurn(local), 2)}); server main thread, /proc schedstat; ${sideBySide}`);
  row('adapter path: CPU ratio to local, 1000 sessions', round(concCpuTurn(adapter) / concCpuTurn(local), 2), '×', `target ≤ 2; ${Math.round(concCpuTurn(adapter))} µs vs ${Math.round(concCpuTurn(local))} µs per turn at ${CONCURRENT} turns/s`);
  const p50 = percentile(adapter.seq, 50);
  const v50 = percentile(adapter.seqVoice, 50);
  row(
    'adapter path: input_text → first text_delta p50, 1 session',
    round(p50),
    'ms',
    `client-observed; local path ${round(percentile(local.seq, 50))} ms; minus the set_voice RTT p50 (${round(v50)} ms) = ${round(p50 - v50)} ms server-added (target < 1 ms; includes the fake's own time and two extra loopback hops); p99 ${round(percentile(adapter.seq, 99))} ms; ${adapter.seq.length} turns`,
  );
  row(
    `adapter path: input_text → first text_delta p99, ${CONCURRENT} sessions`,
    round(percentile(adapter.conc, 99)),
    'ms',
    `target < 10 ms; client-observed (upper bound); p50 ${round(percentile(adapter.conc, 50))} ms; local path p99 ${round(percentile(local.conc, 99))} ms in the same run; ${adapter.conc.length} samples, each session sends once per 1 s round (staggered, ${CONCURRENT} turns/s); load generator ${adapter.concLoad.clientCores.toFixed(2)} cores, other processes (fake server included) ${adapter.concLoad.foreignCores.toFixed(2)} cores${busyWarning(adapter.concLoad)}`,
  );
  const rate = (f: PathFigures): number => (f.satTurns * 1000) / f.satMs;
  const util = (f: PathFigures): number => f.satCpuMs / f.satMs;
  row(
    'adapter path: turns/s at saturation',
    Math.round(rate(adapter)),
    'turns/s',
    `${SATURATION_SESSIONS} sessions in a closed loop for 2 × ${SATURATION_MS / 1000} s; server main thread busy ${round(util(adapter), 2)} of a core; local path ${Math.round(rate(local))} turns/s (busy ${round(util(local), 2)}); the load generator and the fake server share the same 2 cores, so this is a floor`,
  );
  return out;
}

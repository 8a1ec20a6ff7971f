import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { adapterAlone, type AloneFigures } from './lib/adapter-alone.ts';
import { baseline } from './lib/baseline.ts';
import { closeSessions, openSessions, type BenchSession } from './lib/bench-client.ts';
import { ChildServer } from './lib/child-server.ts';
import { readStamps, splitTurns, type FakeStamps, type Turn, type TurnSplit } from './lib/fake-stamps.ts';
import { LoadMeter } from './lib/load-meter.ts';
import { percentile, progress, round } from './lib/stats.ts';
import { busyWarning, round1, settleAfterStart } from './text-latency.ts';
import type { Row } from './types.ts';

/**
 * The text path on the production adapters (issue 19): LLM_PROVIDER=openai against the fake
 * OpenAI-compatible server in its own process (bench/lib/fake-openai-process.ts: the local
 * model's words, one SSE chunk each), side by side with the local model in the same run: server
 * children measured in alternating blocks so drift and machine load hit them alike. With
 * BENCH_BASELINE=<ref> a third server runs that commit's adapter against the same fake.
 *
 * Every measured turn sends a unique "hello t<n>" (the same reply as "hello"), which the fake
 * stamps on arrival and as its first text reaches the kernel (bench/lib/fake-stamps.ts): server-added latency
 * is the end-to-end latency minus the fake's own time minus the client ↔ server round trip
 * (set_voice p50 of the same server), so it still holds the two loopback hops to the fake.
 *
 * Sessions are renewed every TURNS_PER_SESSION turns: the adapter path serialises the whole
 * history into every request (as a real model needs), so hundreds of turns in one session would
 * measure JSON.stringify of an unrealistic history instead of the HTTP path.
 */

export const name = 'text-adapter';

const INPUT = 'hello';
const REPO = fileURLToPath(new URL('..', import.meta.url));
const TURNS_PER_SESSION = 20;
const SEQUENTIAL_BLOCKS = 12;
const CONCURRENT = 1000;
const CONCURRENT_ROUNDS = 2;
const SATURATION_SESSIONS = 100;
const SATURATION_MS = 4000;

type PathName = 'local' | 'adapter' | 'baseline';

interface PathFigures {
  label: string;
  seq: Turn[];
  seqVoice: number[];
  seqCpuMs: number;
  conc: Turn[];
  concCpuMs: number;
  concLoad: LoadMeter;
  satTurns: number;
  satMs: number;
  satCpuMs: number;
}

/** Unique inputs across paths and rounds: the fake's stamps are keyed by them. */
let turnCounter = 0;
const nextInput = (): string => `hello t${(turnCounter += 1)}`;

export async function run(): Promise<Row[]> {
  const base = baseline();
  progress(`text-adapter: starting the fake OpenAI-compatible server and ${base ? 3 : 2} servers (local, adapter${base ? `, baseline ${base.ref} adapter` : ''})`);
  const loadAtStart = loadavg()[0] as number;
  const stampDir = mkdtempSync(join(tmpdir(), 'parley-stamps-'));
  const stampsFile = join(stampDir, 'stamps.tsv');
  const fake = await ChildServer.start({ script: 'bench/lib/fake-openai-process.ts', env: { BENCH_FAKE_STAMPS: stampsFile } });
  const baseUrl = fake.wsUrl.replace(/^ws/, 'http').replace(/\/ws$/, '');
  const adapterEnv = { LLM_PROVIDER: 'openai', LLM_BASE_URL: baseUrl, LLM_API_KEY: 'sk-bench' };
  const servers: Partial<Record<PathName, ChildServer>> = {
    local: await ChildServer.start(),
    adapter: await ChildServer.start({ env: adapterEnv }),
    ...(base ? { baseline: await ChildServer.start({ env: { ...adapterEnv, ...base.env }, repo: base.dir }) } : {}),
  };
  const paths = Object.keys(servers) as PathName[];
  const server = (path: PathName): ChildServer => servers[path] as ChildServer;
  try {
    progress('text-adapter: the adapter alone in this process (this tree' + (base ? ` and ${base.ref}` : '') + '), alternating blocks');
    const alone = await adapterAlone(baseUrl, { 'this tree': REPO, ...(base ? { [`baseline ${base.ref}`]: base.dir } : {}) });
    for (const path of paths) await settleAfterStart(server(path));
    const figures = Object.fromEntries(paths.map((path) => [path, empty(server(path), path === 'baseline' ? `baseline ${base?.ref} adapter` : path)])) as Record<PathName, PathFigures>;
    for (let block = 0; block < SEQUENTIAL_BLOCKS; block += 1) {
      for (const path of order(paths, block)) await sequentialBlock(server(path), figures[path], block === 0);
    }
    progress(`text-adapter: ${CONCURRENT} sessions per path, ${CONCURRENT_ROUNDS} measured rounds each, alternating`);
    const sessions = Object.fromEntries(await Promise.all(paths.map(async (path) => [path, await openSessions(server(path).wsUrl, server(path).apiKey, CONCURRENT, `ta-${path}`)] as const))) as Record<PathName, BenchSession[]>;
    try {
      for (const path of paths) await round1(sessions[path], 'text', 1000); // warm-up
      for (let r = 0; r < CONCURRENT_ROUNDS; r += 1) {
        for (const path of order(paths, r)) {
          const f = figures[path];
          const cpu = server(path).mainThreadCpuMs();
          f.concLoad.begin();
          f.conc.push(...(await keyedRound(sessions[path], 1000)));
          f.concLoad.end();
          f.concCpuMs += server(path).mainThreadCpuMs() - cpu;
        }
      }
    } finally {
      await closeSessions(paths.flatMap((path) => sessions[path]));
    }
    for (let r = 0; r < 2; r += 1) for (const path of order(paths, r)) await saturate(server(path), figures[path]);
    await new Promise((r) => setTimeout(r, 500)); // the fake flushes its stamps every 200 ms
    const load = `load average (1 min) ${loadAtStart.toFixed(1)} at the start, ${(loadavg()[0] as number).toFixed(1)} at the end`;
    return [...rows(figures, readStamps(stampsFile), load), ...aloneRows(alone)];
  } finally {
    await Promise.all([...paths.map((path) => server(path).stop()), fake.stop()]);
    rmSync(stampDir, { recursive: true, force: true });
  }
}

function empty(server: ChildServer, label: string): PathFigures {
  return { label, seq: [], seqVoice: [], seqCpuMs: 0, conc: [], concCpuMs: 0, concLoad: new LoadMeter(() => server.treeCpuMs()), satTurns: 0, satMs: 0, satCpuMs: 0 };
}

/** Rotates which path goes first, so none always runs right after another's load. */
function order(paths: readonly PathName[], i: number): PathName[] {
  const k = i % paths.length;
  return [...paths.slice(k), ...paths.slice(0, k)];
}

async function keyedTurn(s: BenchSession): Promise<Turn> {
  const key = nextInput();
  const sentMs = performance.now();
  return { key, sentMs, latencyMs: await s.text(key) };
}

/** A fresh session: 3 unmeasured turns, then TURNS_PER_SESSION measured ones and as many set_voice. */
async function sequentialBlock(server: ChildServer, f: PathFigures, warm: boolean): Promise<void> {
  const [session] = await openSessions(server.wsUrl, server.apiKey, 1, 'ta-seq');
  const s = session as BenchSession;
  try {
    for (let i = 0; i < (warm ? 30 : 3); i += 1) await s.text(INPUT);
    const cpu = server.mainThreadCpuMs();
    for (let i = 0; i < TURNS_PER_SESSION; i += 1) f.seq.push(await keyedTurn(s));
    f.seqCpuMs += server.mainThreadCpuMs() - cpu;
    for (let i = 0; i < TURNS_PER_SESSION; i += 1) f.seqVoice.push(await s.setVoice());
  } finally {
    await closeSessions([s]);
  }
}

/** Each session sends one keyed turn, the sends spread evenly over `spreadMs` in random order. */
async function keyedRound(sessions: readonly BenchSession[], spreadMs: number): Promise<Turn[]> {
  const order = [...sessions].sort(() => Math.random() - 0.5);
  const pending: Promise<Turn>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < order.length; i += 1) {
    const at = t0 + ((i + Math.random()) * spreadMs) / order.length;
    const wait = at - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const p = keyedTurn(order[i] as BenchSession);
    p.catch(() => undefined); // rejections surface through Promise.all below
    pending.push(p);
  }
  return Promise.all(pending);
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
      while (!stop) {
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

function rows(figures: Record<PathName, PathFigures>, stamps: ReadonlyMap<string, FakeStamps>, load: string): Row[] {
  const out: Row[] = [];
  const local = figures.local;
  const cpuTurn = (f: PathFigures): number => (f.seqCpuMs * 1000) / f.seq.length;
  const concCpuTurn = (f: PathFigures): number => (f.concCpuMs * 1000) / f.conc.length;
  const rate = (f: PathFigures): number => (f.satTurns * 1000) / f.satMs;
  const util = (f: PathFigures): number => f.satCpuMs / f.satMs;
  const latencies = (turns: readonly Turn[]): number[] => turns.map((t) => t.latencyMs);
  const minusFake = (splits: readonly TurnSplit[]): number[] => splits.map((x) => x.requestMs + x.responseMs);
  const localV50 = percentile(local.seqVoice, 50);
  const localAdded = percentile(latencies(local.seq), 50) - localV50;
  const sideBySide = `side by side in one run: server children (local model; openai adapter${figures.baseline ? `; ${figures.baseline.label}` : ''} → fake server in another process), rotating blocks of ${TURNS_PER_SESSION} turns on fresh sessions; ${load}`;
  for (const path of ['adapter', 'baseline'] as const) {
    const f = figures[path];
    if (!f) continue;
    const who = path === 'adapter' ? 'adapter path' : f.label;
    const row = (metric: string, value: number, unit: string, note: string): void => void out.push({ benchmark: name, metric: `${who}: ${metric}`, value, unit, note });
    row('server CPU per text turn, 1 session', Math.round(cpuTurn(f)), 'µs', `target ≤ 2× local; local path ${Math.round(cpuTurn(local))} µs in the same run (ratio ${round(cpuTurn(f) / cpuTurn(local), 2)}); server main thread, /proc schedstat; ${sideBySide}`);
    row(`CPU ratio to local, ${CONCURRENT} sessions`, round(concCpuTurn(f) / concCpuTurn(local), 2), '×', `target ≤ 2; ${Math.round(concCpuTurn(f))} µs vs ${Math.round(concCpuTurn(local))} µs per turn at ${CONCURRENT} turns/s`);
    const seq = splitTurns(f.seq, stamps);
    const v50 = percentile(f.seqVoice, 50);
    const e2e50 = percentile(latencies(f.seq), 50);
    row(
      'input_text → first text_delta p50, 1 session',
      round(e2e50),
      'ms',
      `client-observed end to end; local path ${round(percentile(latencies(local.seq), 50))} ms; p99 ${round(percentile(latencies(f.seq), 99))} ms; ${f.seq.length} turns`,
    );
    if (seq.length > 0) {
      const added = minusFake(seq);
      row(
        'server-added latency p50, 1 session',
        round(percentile(added, 50) - v50),
        'ms',
        `target < 1 ms. Per turn: end to end (p50 ${round(e2e50)} ms) minus the fake model's own time from the request's arrival to its first text reaching the kernel (p50 ${round(percentile(seq.map((x) => x.fakeMs), 50))} ms, of which ${round(percentile(seq.map((x) => x.heldMs), 50))} ms Node's http held the first chunk corked while the fake composed the rest of its reply, counted as the server's before speed5; stamps on the shared monotonic clock), p50 ${round(percentile(added, 50))} ms, minus this server's set_voice round trip p50 (${round(v50)} ms: the client ↔ server hops). Still holds the two loopback hops to and from the fake. Request side (client send → fake arrival) p50 ${round(percentile(seq.map((x) => x.requestMs), 50))} ms, response side (fake's first write → client's text_delta) p50 ${round(percentile(seq.map((x) => x.responseMs), 50))} ms; p99 ${round(percentile(added, 99) - v50)} ms. Local path, same method (end to end − set_voice p50): ${round(localAdded)} ms; ${seq.length} of ${f.seq.length} turns stamped`,
      );
    }
    row(
      `input_text → first text_delta p99, ${CONCURRENT} sessions`,
      round(percentile(latencies(f.conc), 99)),
      'ms',
      `client-observed end to end; p50 ${round(percentile(latencies(f.conc), 50))} ms; local path p99 ${round(percentile(latencies(local.conc), 99))} ms in the same run; ${f.conc.length} samples, each session sends once per 1 s round (staggered, ${CONCURRENT} turns/s); load generator ${f.concLoad.clientCores.toFixed(2)} cores, other processes (fake server included) ${f.concLoad.foreignCores.toFixed(2)} cores${busyWarning(f.concLoad)}`,
    );
    const conc = splitTurns(f.conc, stamps);
    if (conc.length > 0) {
      const added = minusFake(conc);
      row(
        `server-added latency p99, ${CONCURRENT} sessions`,
        round(percentile(added, 99)),
        'ms',
        `target < 10 ms. Per turn end to end minus the fake's own time (p99 ${round(percentile(conc.map((x) => x.fakeMs), 99))} ms), not minus the client ↔ server hops (an upper bound: it holds the load generator's own delays at ${CONCURRENT} sessions); p50 ${round(percentile(added, 50))} ms; local path end to end p99 ${round(percentile(latencies(local.conc), 99))} ms (the same hops, no model); ${conc.length} of ${f.conc.length} turns stamped`,
      );
    }
    row(
      'turns/s at saturation',
      Math.round(rate(f)),
      'turns/s',
      `${SATURATION_SESSIONS} sessions in a closed loop for 2 × ${SATURATION_MS / 1000} s; server main thread busy ${round(util(f), 2)} of a core (${Math.round((f.satCpuMs * 1000) / f.satTurns)} µs per turn); local path ${Math.round(rate(local))} turns/s (busy ${round(util(local), 2)}); the load generator and the fake server share the same 2 cores, so this is a floor`,
    );
  }
  return out;
}

function aloneRows(alone: readonly AloneFigures[]): Row[] {
  const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const [self, other] = alone;
  if (!self) return [];
  const blocks = (f: AloneFigures): string => f.cpuUsPerReply.map((x) => Math.round(x)).join(', ');
  return [
    {
      benchmark: name,
      metric: 'adapter alone: CPU per streamed reply, this tree',
      value: Math.round(mean(self.cpuUsPerReply)),
      unit: 'µs',
      note: `OpenAiLanguageModel.stream in the bench process against the fake in its own, main-thread CPU per reply (request, SSE, events; no session or WebSocket), blocks of 100: ${blocks(self)}${other ? `; ${other.label} in alternating blocks of the same run: ${Math.round(mean(other.cpuUsPerReply))} µs (${blocks(other)}), ratio ${round(mean(self.cpuUsPerReply) / mean(other.cpuUsPerReply), 2)}` : ''}`,
    },
  ];
}

import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { mintScopedKey } from '../signaling/keys/scoped-key.ts';
import { deploymentEnv, type DeploymentEnv } from '../signaling/testing/deployment.ts';
import { startNginx, type TestNginx } from '../signaling/testing/nginx-server.ts';
import { siteForTest } from '../signaling/testing/nginx-site.ts';
import { startPostgres } from '../signaling/testing/postgres-server.ts';
import { startRedis } from '../signaling/testing/redis-server.ts';
import { freePort } from '../signaling/testing/server-process.ts';
import { baseline } from './lib/baseline.ts';
import { BenchSession, closeSessions } from './lib/bench-client.ts';
import { ChildServer } from './lib/child-server.ts';
import { LoadMeter } from './lib/load-meter.ts';
import { median, percentile, progress, round } from './lib/stats.ts';
import type { Row } from './types.ts';

/**
 * Scale-out (issue 15), every comparison measured side by side in one run, so the shared
 * machine's load falls on both sides alike:
 * - write-through: one process with REDIS_URL (the conversation written to Redis at every turn
 *   end) against one without (memory stash, nothing written), loaded at the same time with the
 *   same offered load: server CPU per turn and input_text → done p50/p99;
 * - 1 vs 2 processes behind nginx (deploy/nginx/parley.conf), both on Redis and PostgreSQL, in
 *   alternating windows: text turns per second (closed loop) and session starts per second;
 * - resume: drop → resumed on the other process, on the same process, and a fresh start, start
 *   frame → ready, p50/p99.
 * Everything runs on this machine: the load generator, nginx, Redis and PostgreSQL take CPU from
 * the servers, so the 2-process ratio is what two cores give with all of that beside them.
 */
export const name = 'scale';

/** `SCALE_BENCH_PARTS=write-through` (or `scale-out`) runs only that part: quicker while developing. */
const PARTS = new Set((process.env.SCALE_BENCH_PARTS ?? 'write-through,scale-out').split(','));

const MESSAGE = 'Could you remind me what we said about the delivery window and the invoice address?';

export async function run(): Promise<Row[]> {
  progress('scale: starting redis-server and PostgreSQL');
  const [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
  try {
    const env = await deploymentEnv({ redis, postgres });
    return [...(PARTS.has('write-through') ? await writeThroughCost(env) : []), ...(PARTS.has('scale-out') ? await scaleOut(env) : [])];
  } finally {
    await Promise.all([redis.close(), postgres.close()]);
  }
}

/** Text-only servers: the speech providers point nowhere, so no recogniser or synthesiser is started. */
function serverEnv(env: Partial<DeploymentEnv>): Record<string, string> {
  return {
    ...env,
    ASR_PROVIDER: 'openai', ASR_BASE_URL: 'http://127.0.0.1:9/v1', TTS_PROVIDER: 'openai', TTS_BASE_URL: 'http://127.0.0.1:9/v1',
    WEBRTC_MEDIA_WORKERS: '0',
  };
}

let sessions = 0;
/** A session id and its scoped key (signed: no database on the start path, as for a browser). */
function identity(env: DeploymentEnv): { sessionId: string; key: string } {
  const sessionId = `scale-${(sessions += 1)}`;
  return { sessionId, key: mintScopedKey(Buffer.from(env.SCOPED_KEY_SECRET, 'utf8'), { account: 'bench', sessionId, keyId: 'bench', ttlS: 3600 }).apiKey };
}

async function open(env: DeploymentEnv, url: string, count: number): Promise<BenchSession[]> {
  const out: BenchSession[] = [];
  for (let i = 0; i < count; i += 50) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => {
      const { sessionId, key } = identity(env);
      return BenchSession.open(url, key, sessionId);
    }))));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Write-through cost

const WT_SESSIONS = 100;
const WT_TURNS = 10;
/** Turns per second offered to each server (SCALE_WT_RATE). */
const WT_RATE = Number(process.env.SCALE_WT_RATE ?? 250);
/** Windows, every server loaded at once; the first warms the servers up (JIT) and is discarded. */
const WT_ROUNDS = Number(process.env.SCALE_WT_ROUNDS ?? 6);
/**
 * Then windows at a light load (SCALE_WT_LIGHT_RATE turns/s per server): turn-end latency without
 * queueing. A p99 of 500 turns is their fifth slowest; SCALE_WT_LIGHT_ROUNDS=12 makes it the 30th.
 */
const WT_LIGHT_ROUNDS = Number(process.env.SCALE_WT_LIGHT_ROUNDS ?? 2);
const WT_LIGHT_SESSIONS = 25;
const WT_LIGHT_RATE = Number(process.env.SCALE_WT_LIGHT_RATE ?? 25);

interface Side {
  label: string;
  server: ChildServer;
  /** Event-loop thread CPU and all threads' CPU, ms, over the kept windows. */
  mainMs: number;
  /** The event-loop thread's kernel time over the kept windows, ms. */
  sysMs: number;
  allMs: number;
  turns: number;
  ends: number[];
  /** input_text → done at light load (WT_LIGHT_RATE), ms. */
  lightEnds: number[];
  /** Main-thread CPU per turn of each kept window, µs, in round order. */
  perWindow: number[];
}

/**
 * One server without REDIS_URL (memory stash), one with it (written through to Redis at every
 * turn end), both on the same PostgreSQL (the usage ledger is written at every turn end too), so
 * only the stash differs; with BENCH_BASELINE=<ref> also that commit's server with REDIS_URL.
 */
async function writeThroughCost(env: DeploymentEnv): Promise<Row[]> {
  const base = baseline();
  progress(`scale: write-through: one server with REDIS_URL, one without${base ? `, and ${base.ref} with it` : ''}`);
  const without = serverEnv({ SCOPED_KEY_SECRET: env.SCOPED_KEY_SECRET, DATABASE_URL: env.DATABASE_URL });
  // One after another: several tsx servers compiling at once on a busy machine miss the start timeout.
  const started: ChildServer[] = [];
  // SCALE_WT_AA=1 adds a second memory-stash server: the noise floor of the comparison (A/A).
  const aa = Boolean(process.env.SCALE_WT_AA);
  const envs = [without, ...(aa ? [without] : []), serverEnv(env)];
  for (const e of envs) started.push(await ChildServer.start({ env: e, startTimeoutMs: 60_000 }));
  if (base) started.push(await ChildServer.start({ env: serverEnv(env), repo: base.dir, startTimeoutMs: 60_000 }));
  const extras = extraSides(env, without);
  for (const e of extras) started.push(await ChildServer.start({ env: e.env, startTimeoutMs: 60_000 }));
  const labels = ['memory stash', ...(aa ? ['memory stash again'] : []), 'Redis', ...(base ? [`Redis at ${base.ref} (${base.sha.slice(0, 7)})`] : []), ...extras.map((e) => e.label)];
  const sides: Side[] = started.map((server, i) => ({ label: labels[i]!, server, mainMs: 0, sysMs: 0, allMs: 0, turns: 0, ends: [], lightEnds: [], perWindow: [] }));
  const load = new LoadMeter(() => started.reduce((a, s) => a + s.cpuMs(), 0));
  const redis = new Redis(env.REDIS_URL);
  let redisCalls = 0;
  try {
    for (let round = 0; round < WT_ROUNDS; round += 1) {
      // Every server at once, each with its own clients: a burst of load from the rest of the
      // machine falls on all of them alike, which alternating windows could not promise.
      const groups = await Promise.all(sides.map((side) => open(env, side.server.wsUrl, WT_SESSIONS)));
      const before = sides.map((side) => [side.server.mainThreadCpuMs(), side.server.cpuMs(), side.server.mainThreadSystemMs()] as const);
      load.begin();
      const calls = await scriptCalls(redis);
      const ends = await Promise.all(groups.map((group) => offered(group, WT_TURNS, WT_RATE)));
      load.end();
      if (round > 0) redisCalls += (await scriptCalls(redis)) - calls;
      if (round > 0) {
        for (const [i, side] of sides.entries()) {
          const mainMs = side.server.mainThreadCpuMs() - before[i]![0];
          side.mainMs += mainMs;
          side.allMs += side.server.cpuMs() - before[i]![1];
          side.sysMs += side.server.mainThreadSystemMs() - before[i]![2];
          side.turns += ends[i]!.length;
          side.ends.push(...ends[i]!);
          side.perWindow.push((mainMs * 1000) / ends[i]!.length);
        }
      }
      await Promise.all(groups.map((group) => closeSessions(group)));
    }
    progress(`scale: write-through: ${WT_ROUNDS} windows done`);
    // Light load: what a turn end waits for when the servers are not queueing turns.
    for (let round = 0; round < WT_LIGHT_ROUNDS; round += 1) {
      const groups = await Promise.all(sides.map((side) => open(env, side.server.wsUrl, WT_LIGHT_SESSIONS)));
      const ends = await Promise.all(groups.map((group) => offered(group, WT_TURNS, WT_LIGHT_RATE)));
      for (const [i, side] of sides.entries()) side.lightEnds.push(...ends[i]!);
      await Promise.all(groups.map((group) => closeSessions(group)));
    }
  } finally {
    redis.disconnect();
    await Promise.all(started.map((s) => s.stop()));
  }
  const us = (ms: number, turns: number) => round((ms * 1000) / turns, 1);
  const redisTurns = sides.filter((s) => s.label.startsWith('Redis')).reduce((a, s) => a + s.turns, 0);
  const plain = sides[0]!;
  const extra = (s: Side, key: 'mainMs' | 'allMs') => round(((s[key] / s.turns) / (plain[key] / plain.turns) - 1) * 100, 1);
  // Per window, against the memory stash in the same window: the spread shows the noise.
  const perRound = (s: Side) => s.perWindow.map((x, i) => (x / plain.perWindow[i]! - 1) * 100);
  const spread = (xs: number[]) => `per window ${round(Math.min(...xs), 1)} to ${round(Math.max(...xs), 1)} %, median ${round(median(xs), 1)} %`;
  const windows = (s: Side) => s.perWindow.map((x) => round(x, 0)).join(', ');
  const shape = `${WT_SESSIONS} sessions × ${WT_TURNS} turns at ${WT_RATE} turns/s offered per window, ${WT_ROUNDS - 1} kept windows, all servers loaded at once (each with its own clients); local model at 0 ms/word; load generator ${load.clientCores.toFixed(2)} cores, other processes on the machine ${load.foreignCores.toFixed(2)} cores, load average at the end ${loadavg()[0]!.toFixed(1)}`;
  const all = sides.map((s) => s.label).join(' / ');
  const rows: Row[] = [
    { benchmark: name, metric: `write-through: server event-loop CPU per text turn, ${all}`, value: sides.map((s) => us(s.mainMs, s.turns)).join(' / '), unit: 'µs', note: `per window: ${sides.map(windows).join(' and ')} µs; all threads ${sides.map((s) => us(s.allMs, s.turns)).join(' / ')} µs; ${shape}` },
    { benchmark: name, metric: `write-through: of which kernel time, ${all}`, value: sides.map((s) => us(s.sysMs, s.turns)).join(' / '), unit: 'µs', note: `the event-loop thread's system time (/proc stime, 10 ms ticks) per turn: socket sends and reads (on loopback a send also runs the receiver's TCP path); user time ${sides.map((s) => us(s.mainMs - s.sysMs, s.turns)).join(' / ')} µs; Redis script calls per turn written through ${round(redisCalls / redisTurns, 3)} (INFO commandstats, all Redis servers together)` },
  ];
  for (const s of sides.slice(1)) {
    rows.push({ benchmark: name, metric: `write-through: extra event-loop CPU per text turn, ${s.label}`, value: extra(s, 'mainMs'), unit: '%', note: `goal < 5 %; ${spread(perRound(s))}; all threads +${extra(s, 'allMs')} %; the conversation (history of ≤ ${WT_TURNS} turns) written to Redis at every turn end` });
  }
  for (const q of [50, 90, 99]) {
    const at = sides.map((s) => percentile(s.lightEnds, q));
    rows.push({ benchmark: name, metric: `write-through: input_text → done p${q} at ${WT_LIGHT_RATE} turns/s per server, ${all}`, value: at.map((x) => round(x, 2)).join(' / '), unit: 'ms', note: `difference ${at.slice(1).map((x) => round(x - at[0]!, 2)).join(' / ')} ms${q === 99 ? ' (goal < 1 ms)' : ''}; client-observed, light load (no turn waits behind another); ${WT_LIGHT_SESSIONS} sessions × ${WT_TURNS} turns per window, ${WT_LIGHT_ROUNDS} windows, all servers at once; ${sides.map((s) => s.lightEnds.length).join(' + ')} turns` });
  }
  for (const q of [50, 90, 99]) {
    const at = sides.map((s) => percentile(s.ends, q));
    rows.push({ benchmark: name, metric: `write-through: input_text → done p${q}, ${all}`, value: at.map((x) => round(x, 2)).join(' / '), unit: 'ms', note: `difference ${at.slice(1).map((x) => round(x - at[0]!, 2)).join(' / ')} ms${q === 99 ? ' (goal < 1 ms)' : ''}; client-observed; the write is made after done is sent; ${sides.map((s) => s.ends.length).join(' + ')} turns` });
  }
  return rows;
}

/**
 * SCALE_WT_SIDES (comma-separated) adds servers after the others, loaded with them: `memory` (a
 * memory-stash server placed last, so the A/A pair also covers the position in the load
 * generator's order) or `NAME=value …` (a Redis-backed server with those variables set: a
 * configuration measured side by side with the default one).
 */
function extraSides(env: DeploymentEnv, memory: Record<string, string>): Array<{ label: string; env: Record<string, string> }> {
  return (process.env.SCALE_WT_SIDES ?? '').split(',').filter(Boolean).map((side) => {
    if (side === 'memory') return { label: 'memory stash last', env: memory };
    return { label: `Redis ${side}`, env: { ...serverEnv(env), ...Object.fromEntries(side.split(' ').map((kv) => kv.split('=') as [string, string])) } };
  });
}

/** Every session takes `turns` turns; sends spread evenly over time at `rate` turns/s in total. Resolves with input_text → done of each. */
async function offered(group: BenchSession[], turns: number, rate: number): Promise<number[]> {
  const ends: number[] = [];
  const gapMs = (group.length / rate) * 1000;
  await Promise.all(group.map(async (s, i) => {
    await sleep((i / group.length) * gapMs);
    for (let t = 0; t < turns; t += 1) {
      const started = performance.now();
      await s.text(MESSAGE);
      ends.push(s.lastTurnMs);
      await sleep(Math.max(0, gapMs - (performance.now() - started)));
    }
  }));
  return ends;
}

// ---------------------------------------------------------------------------------------------
// One process against two, behind nginx; resume across processes

const CLOSED_SESSIONS = 200;
const WINDOW_MS = 4000;
const STARTERS = 32;
const START_WINDOW_MS = 3000;
/** Rounds of one window per configuration, the order swapped every round. */
const ROUNDS = 4;
const RESUMES = 100;

interface Window {
  rate: number;
  /** Server CPU (all processes, all threads) per turn or start, ms. */
  cpuPer: number;
}

async function scaleOut(env: DeploymentEnv): Promise<Row[]> {
  progress('scale: two servers on Redis and PostgreSQL, nginx with one and with two upstreams');
  const [p1, p2] = await Promise.all([ChildServer.start({ env: serverEnv(env) }), ChildServer.start({ env: serverEnv(env) })]);
  const lbs: Array<{ nginx: TestNginx; wsUrl: string }> = [];
  try {
    const portOf = (s: ChildServer) => Number(new URL(s.wsUrl).port);
    // The shipped site (deploy/nginx/parley.conf) in plain HTTP, once with each upstream.
    for (const upstreams of [[portOf(p1)], [portOf(p1), portOf(p2)]]) {
      const [http, https] = [await freePort(), await freePort()];
      lbs.push({ nginx: await startNginx(() => siteForTest({ http, https, upstreams }), https), wsUrl: `ws://127.0.0.1:${https}/ws` });
    }
    const serverCpu = () => p1.cpuMs() + p2.cpuMs();
    const load = new LoadMeter(serverCpu);
    const turns: Record<1 | 2, Window[]> = { 1: [], 2: [] };
    const starts: Record<1 | 2, Window[]> = { 1: [], 2: [] };
    const measure = async (run: () => Promise<number>, seconds: number): Promise<Window> => {
      const cpu = serverCpu();
      load.begin();
      const count = await run();
      load.end();
      return { rate: count / seconds, cpuPer: (serverCpu() - cpu) / count };
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const n of round % 2 === 0 ? ([1, 2] as const) : ([2, 1] as const)) {
        const url = (n === 1 ? lbs[0] : lbs[1])!.wsUrl;
        turns[n].push(await measure(() => closedLoop(env, url), WINDOW_MS / 1000));
        starts[n].push(await measure(() => startLoop(env, url), START_WINDOW_MS / 1000));
        progress(`scale: round ${round + 1}, ${n} process${n === 1 ? '' : 'es'}: ${round1(turns[n].at(-1)!.rate)} turns/s, ${round1(starts[n].at(-1)!.rate)} starts/s`);
      }
    }
    const resume = await resumes(env, p1.wsUrl, p2.wsUrl);
    const mean = (ws: Window[], key: keyof Window) => ws.reduce((a, w) => a + w[key], 0) / ws.length;
    const ratios = (m: Record<1 | 2, Window[]>) => m[2].map((w, i) => w.rate / m[1][i]!.rate);
    const spread = (xs: number[]) => `per-round ratios ${round(Math.min(...xs), 2)}–${round(Math.max(...xs), 2)}`;
    const noise = `meanwhile the load generator used ${load.clientCores.toFixed(2)} cores and everything else (nginx, Redis, PostgreSQL, other work on the shared machine) ${load.foreignCores.toFixed(2)} cores`;
    return [
      { benchmark: name, metric: 'text turns/s behind nginx, 1 process / 2 processes', value: `${round1(mean(turns[1], 'rate'))} / ${round1(mean(turns[2], 'rate'))}`, unit: 'turns/s', note: `${CLOSED_SESSIONS} sessions, closed loop (next input_text when done arrives; history reset every 10 turns), ${ROUNDS} rounds of ${WINDOW_MS / 1000} s windows, order swapped each round; server CPU per turn ${round(mean(turns[1], 'cpuPer'), 3)} / ${round(mean(turns[2], 'cpuPer'), 3)} ms; ${noise}` },
      { benchmark: name, metric: 'text turns/s: 2 processes ÷ 1', value: round(mean(turns[2], 'rate') / mean(turns[1], 'rate'), 2), unit: '×', note: `goal ≥ 1.8× on 2 cores; ${spread(ratios(turns))}; the load generator, nginx and Redis share those 2 cores` },
      { benchmark: name, metric: 'session starts/s behind nginx, 1 process / 2 processes', value: `${round1(mean(starts[1], 'rate'))} / ${round1(mean(starts[2], 'rate'))}`, unit: 'starts/s', note: `${STARTERS} clients each opening a socket, start (scoped key) → ready, closing, again; ${ROUNDS} rounds of ${START_WINDOW_MS / 1000} s; ratio ${round(mean(starts[2], 'rate') / mean(starts[1], 'rate'), 2)}× (${spread(ratios(starts))}); server CPU per start ${round(mean(starts[1], 'cpuPer'), 2)} / ${round(mean(starts[2], 'cpuPer'), 2)} ms` },
      ...(['cross', 'same', 'fresh'] as const).map((kind) => ({
        benchmark: name,
        metric: `${kind === 'cross' ? 'resume on the other process' : kind === 'same' ? 'resume on the same process' : 'fresh start'}: start → ready p50 / p99`,
        value: `${round(median(resume[kind]), 2)} / ${round(percentile(resume[kind], 99), 2)}`,
        unit: 'ms',
        note: `${resume[kind].length} samples interleaved with the other two kinds; socket open + start frame → ready, direct to a process; the conversation has 20 turns, dropped (no close handshake) just before`,
      })),
    ];
  } finally {
    await Promise.all(lbs.map((lb) => lb.nginx.stop()));
    await Promise.all([p1.stop(), p2.stop()]);
  }
}

/** Closed loop for WINDOW_MS: every session sends its next turn as soon as the last one is done. Turns done. */
async function closedLoop(env: DeploymentEnv, url: string): Promise<number> {
  const group = await open(env, url, CLOSED_SESSIONS);
  let done = 0;
  const until = performance.now() + WINDOW_MS;
  await Promise.all(group.map(async (s) => {
    for (let t = 1; performance.now() < until; t += 1) {
      await s.text(MESSAGE);
      done += 1;
      if (t % 10 === 0) s.reset();
    }
  }));
  await closeSessions(group);
  return done;
}

/** STARTERS clients opening and closing sessions back to back for START_WINDOW_MS. Starts done. */
async function startLoop(env: DeploymentEnv, url: string): Promise<number> {
  let count = 0;
  const until = performance.now() + START_WINDOW_MS;
  await Promise.all(Array.from({ length: STARTERS }, async () => {
    while (performance.now() < until) {
      const { sessionId, key } = identity(env);
      const s = await BenchSession.open(url, key, sessionId);
      count += 1;
      await s.close();
    }
  }));
  return count;
}

/** One 20-turn conversation dropped and resumed over and over: across processes, on the same one; fresh starts between. */
async function resumes(env: DeploymentEnv, a: string, b: string): Promise<{ cross: number[]; same: number[]; fresh: number[] }> {
  progress(`scale: resume: ${RESUMES} each of cross-process, same-process, fresh`);
  const out = { cross: [] as number[], same: [] as number[], fresh: [] as number[] };
  const { sessionId, key } = identity(env);
  let at = a;
  let session = await BenchSession.open(at, key, sessionId);
  for (let t = 0; t < 20; t += 1) await session.text(MESSAGE);
  for (let i = 0; i < RESUMES * 3; i += 1) {
    const kind = (['cross', 'same', 'fresh'] as const)[i % 3]!;
    if (kind === 'fresh') {
      const other = identity(env);
      const t0 = performance.now();
      const fresh = await BenchSession.open(at, other.key, other.sessionId);
      out.fresh.push(performance.now() - t0);
      await fresh.close();
      continue;
    }
    const token = session.resumeToken;
    session.drop();
    if (kind === 'cross') at = at === a ? b : a;
    const t0 = performance.now();
    session = await BenchSession.open(at, key, sessionId, 15_000, token);
    out[kind].push(performance.now() - t0);
  }
  await session.text(MESSAGE);
  await session.close();
  return out;
}

/** Script calls (EVALSHA) Redis has run so far. */
async function scriptCalls(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function round1(x: number): number {
  return round(x, 1);
}

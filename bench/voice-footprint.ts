import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { concat } from '../media/testing/audio-stream.ts';
import { endAligned, fixture, tone, RATE } from './lib/audio.ts';
import { baseline } from './lib/baseline.ts';
import { ChildServer, type ServerTiming } from './lib/child-server.ts';
import { LoadMeter } from './lib/load-meter.ts';
import { decisionDiff, sileroCpu } from './lib/silero-cpu.ts';
import { percentile, progress, round } from './lib/stats.ts';
import { toFrames, VoiceClient } from './lib/voice-client.ts';
import type { Row } from './types.ts';

/**
 * What one WebSocket voice session costs the server at a fixed load, in figures a busy machine
 * barely moves: resident memory per added session after a forced GC (and where it sits: JS heap,
 * ArrayBuffers, the malloc heap), and on-CPU time of the event-loop thread per session-second.
 * With BENCH_BASELINE=<git ref> the same load also runs on that commit's server, and the two are
 * measured in alternating windows (ABBA) in one run, at each session count of
 * BENCH_FOOTPRINT_SESSIONS (memory at the first). Jitter and GC are reported per window too, but
 * on a busy machine only the CPU and memory figures compare. BENCH_FOOTPRINT_ENV="NAME=value …"
 * sets variables for this tree's server only (e.g. SILERO_QUIET_GATE=1). First, before any
 * server starts, Silero's own CPU per session-second is measured in this process for both trees
 * and for this tree with its quiet gate (ABAB), with the frames each decides differently from
 * this tree without the gate and the share of windows the gate skipped.
 */

export const name = 'voice-footprint';

const STEPS = (process.env.BENCH_FOOTPRINT_SESSIONS ?? '150,300').split(',').map(Number);
const SESSIONS = STEPS[0]!;
const SILERO_SESSIONS = 150;
const SILERO_SECONDS = 3;
const WINDOW_MS = 8000;
const SETTLE_MS = 3000;
const ROUNDS = 2;
const THIS_TREE_ENV = Object.fromEntries((process.env.BENCH_FOOTPRINT_ENV ?? '').split(/\s+/).filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const LOAD_REPLY_TEXT = 'say the weather is mild and the sky is clear today.';

interface Side {
  label: string;
  server: ChildServer;
  sessions: VoiceClient[];
  windows: Window[];
}

interface Window {
  sessions: number;
  mainMsPerSessionS: number;
  allMsPerSessionS: number;
  jitterP99: number;
  pacerP99: number;
  /** Share of the window the server's event-loop thread was runnable but waiting for a CPU. */
  runQueue: number;
  gcCount: number;
  gcMs: number;
  foreignCores: number;
  /** The busiest threads besides the event loop (the Silero thread first, usually), ms CPU per session-second. */
  threads: Array<{ name: string; ms: number }>;
}

interface Footprint {
  rssKb: number;
  heapKb: number;
  arrayBuffersKb: number;
  mallocKb: number;
}

let counter = 0;

export async function run(): Promise<Row[]> {
  const base = baseline();
  const thisLabel = `this tree${Object.keys(THIS_TREE_ENV).length > 0 ? ` (${Object.entries(THIS_TREE_ENV).map(([k, v]) => `${k}=${v}`).join(' ')})` : ''}`;
  const trees = [{ label: thisLabel, env: THIS_TREE_ENV }, ...(base ? [{ label: `baseline ${base.ref} (${base.sha.slice(0, 7)})`, repo: base.dir, env: base.env }] : [])];
  const sides: Side[] = [];
  const memory = new Map<Side, Footprint>();
  const clip = endAligned(fixture('twelve.wav'));
  const loop = toFrames(concat(clip, tone(RATE * 6 - clip.length)));
  const idle = toFrames(tone(RATE));
  const silero = await sileroRows(base, concat(clip, tone(RATE * 6 - clip.length)));
  try {
    for (const tree of trees) {
      progress(`voice-footprint: ${tree.label}: ${SESSIONS} sessions`);
      const server = await ChildServer.start({
        script: 'bench/lib/fake-voice-server.ts',
        env: { LOCAL_LLM_WORD_DELAY_MS: '0', BENCH_FAKE_TRANSCRIPT: LOAD_REPLY_TEXT, MAX_SESSIONS: '2000', ...tree.env },
        inspectable: true,
        ...(tree.repo ? { repo: tree.repo } : {}),
      });
      const side: Side = { label: tree.label, server, sessions: [], windows: [] };
      sides.push(side);
      const before = await footprint(server);
      await grow(side, SESSIONS, idle, loop);
      // Memory while every session talks and hears its replies (the other tree's sessions are quiet).
      talk(side, true);
      await sleep(SETTLE_MS + 2000);
      const after = await footprint(server);
      talk(side, false);
      memory.set(side, {
        rssKb: (after.rssKb - before.rssKb) / SESSIONS,
        heapKb: (after.heapKb - before.heapKb) / SESSIONS,
        arrayBuffersKb: (after.arrayBuffersKb - before.arrayBuffersKb) / SESSIONS,
        mallocKb: (after.mallocKb - before.mallocKb) / SESSIONS,
      });
    }
    for (const n of STEPS) {
      for (const side of sides) await grow(side, n, idle, loop);
      for (let r = 0; r < ROUNDS; r += 1) {
        for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
          progress(`voice-footprint: ${n} sessions, window ${r + 1}/${ROUNDS}, ${side.label}`);
          side.windows.push(await measure(side));
        }
      }
    }
  } finally {
    for (const side of sides) {
      await Promise.all(side.sessions.map((s) => s.close()));
      await side.server.stop();
    }
  }
  return [...silero, ...sides.flatMap((side) => rows(side, memory.get(side)!))];
}

/** Opens quiet sessions until the side has `n`; each loops `loop` once its microphone starts. */
async function grow(side: Side, n: number, idle: Buffer[], loop: Buffer[]): Promise<void> {
  while (side.sessions.length < n) {
    const opened = await Promise.all(
      Array.from({ length: Math.min(25, n - side.sessions.length) }, () =>
        VoiceClient.open(side.server.wsUrl, { session_id: `footprint-${process.pid}-${++counter}`, api_key: side.server.apiKey, mode: { kind: 'service', greeting: false }, audio: { sr: RATE, output_encoding: 'pcm16', output_sr: RATE } }, { idle, lean: true }),
      ),
    );
    for (const c of opened) c.mic.setLoop(loop, Math.floor(Math.random() * loop.length));
    side.sessions.push(...opened);
  }
}

/** Silero in this process: this tree without and with its quiet gate, and the baseline's; decisions compared with the first. */
async function sileroRows(base: ReturnType<typeof baseline>, audio: Int16Array): Promise<Row[]> {
  const trees = [
    { label: 'this tree' },
    { label: 'this tree, quiet gate', options: { quietGate: true } },
    ...(base ? [{ label: `baseline ${base.ref} (${base.sha.slice(0, 7)})`, dir: base.dir }] : []),
  ];
  progress(`voice-footprint: Silero CPU, ${SILERO_SESSIONS} detectors in this process, ${trees.map((t) => t.label).join(' vs ')}`);
  const results = await sileroCpu(trees, audio, SILERO_SESSIONS, SILERO_SECONDS, ROUNDS);
  return results.map((r, i) => {
    const same = i > 0 ? decisionDiff(results[0]!.decisions, r.decisions) : undefined;
    return {
      benchmark: name,
      metric: `Silero VAD CPU per session-second, all threads${r.label === 'this tree' ? '' : `, ${r.label}`}`,
      value: round(r.allMs, 3),
      unit: 'ms CPU/s',
      note:
        `event-loop thread ${round(r.mainMs, 3)} ms/s; ${SILERO_SESSIONS} detectors in the bench process, each fed one 20 ms frame of twelve.wav + room tone per 20 ms for ${SILERO_SECONDS} s × ${ROUNDS} rounds (trees alternating), ` +
        `minus the same feed loop without detectors; mean batch ${round(r.meanBatch, 1)} windows; windows the quiet gate skipped ${Math.round(r.quietShare * 100)} %` +
        (same ? `; decisions differing from this tree without the gate: ${same.differing} of ${same.compared} frames` : ''),
    };
  });
}

function talk(side: Side, on: boolean): void {
  for (const s of side.sessions) {
    if (on) s.mic.start(Math.random() * 20);
    else s.mic.stop();
  }
}

async function measure(side: Side): Promise<Window> {
  const { server, sessions } = side;
  talk(side, true);
  await sleep(SETTLE_MS);
  await timingOrNothing(server);
  for (const s of sessions) {
    s.jitter.deviations.length = 0;
    s.recording = true;
  }
  const load = new LoadMeter(() => server.cpuMs());
  const main0 = server.mainThreadCpuMs();
  const queue0 = server.mainThreadRunQueueMs();
  const all0 = server.cpuMs();
  const threads0 = threadCpuMs(server.pid);
  const t0 = performance.now();
  load.begin();
  await sleep(WINDOW_MS);
  load.end();
  const wall = performance.now() - t0;
  const main = server.mainThreadCpuMs() - main0;
  const queue = server.mainThreadRunQueueMs() - queue0;
  const all = server.cpuMs() - all0;
  const threads1 = threadCpuMs(server.pid);
  const timing = await timingOrNothing(server);
  for (const s of sessions) s.recording = false;
  talk(side, false);
  const deviations = sessions.flatMap((s) => s.jitter.deviations);
  await sleep(1500);
  const perSessionS = (ms: number): number => (ms / wall) * (1000 / sessions.length);
  return {
    sessions: sessions.length,
    mainMsPerSessionS: perSessionS(main),
    allMsPerSessionS: perSessionS(all),
    jitterP99: deviations.length > 0 ? percentile(deviations, 99) : Number.NaN,
    pacerP99: timing?.pacer.p99 ?? Number.NaN,
    runQueue: queue / wall,
    gcCount: timing?.gc.count ?? Number.NaN,
    gcMs: timing?.gc.totalMs ?? Number.NaN,
    foreignCores: load.foreignCores,
    threads: [...threads1]
      .filter(([tid]) => tid !== server.pid)
      .map(([tid, t]) => ({ name: t.name, ms: perSessionS(t.ms - (threads0.get(tid)?.ms ?? 0)) }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3),
  };
}

/**
 * The server's event-loop report, or nothing when a saturated server does not answer in 10 s:
 * that window's jitter and CPU still count (NaN in the pacer and GC figures says which).
 */
async function timingOrNothing(server: ChildServer): Promise<ServerTiming | undefined> {
  return server.eventLoopDelay(10000).catch(() => undefined);
}

/** On-CPU time of each thread of a process (ms, /proc/<pid>/task/<tid>/schedstat), with its name. */
function threadCpuMs(pid: number): Map<number, { name: string; ms: number }> {
  const out = new Map<number, { name: string; ms: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    try {
      const ms = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
      out.set(tid, { name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), ms });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** Resident memory, JS heap and ArrayBuffers after a full GC, and the malloc heap ([heap] in smaps), in KB. */
async function footprint(server: ChildServer): Promise<Footprint> {
  const inspector = await server.inspect();
  await inspector.collectGarbage();
  const usage = await inspector.memoryUsage();
  return { rssKb: usage.rss / 1024, heapKb: usage.heapUsed / 1024, arrayBuffersKb: usage.arrayBuffers / 1024, mallocKb: mallocHeapKb(server.pid) };
}

function mallocHeapKb(pid: number): number {
  let kb = 0;
  let inHeap = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inHeap = line.trimEnd().endsWith('[heap]');
    else if (inHeap && line.startsWith('Rss:')) kb += Number(/(\d+)/.exec(line)?.[1] ?? 0);
  }
  return kb;
}

function rows(side: Side, mem: Footprint): Row[] {
  const suffix = side.label === 'this tree' ? '' : `, ${side.label}`;
  const memory: Row = {
    benchmark: name,
    metric: `resident memory per added voice session, talking, after GC${suffix}`,
    value: Math.round(mem.rssKb),
    unit: 'KB',
    note:
      `target < 512 KB; (RSS with ${SESSIONS} talking sessions − RSS with none) / ${SESSIONS}, each after a full GC (V8 inspector); of it JS heap ${Math.round(mem.heapKb)} KB, ` +
      `ArrayBuffers ${Math.round(mem.arrayBuffersKb)} KB, malloc heap ([heap] in /proc/<pid>/smaps) ${Math.round(mem.mallocKb)} KB per session; ` +
      `each session loops twelve.wav + room tone (6 s) and gets a ≈3.3 s reply per loop (fake ASR/TTS, local model), 16 kHz PCM16 both ways`,
  };
  return [memory, ...STEPS.flatMap((n) => stepRows(side.windows.filter((w) => w.sessions === n), n, suffix))];
}

function stepRows(windows: Window[], n: number, suffix: string): Row[] {
  const mean = (f: (w: Window) => number): number => windows.reduce((a, w) => a + f(w), 0) / windows.length;
  const load = `other processes used ${round(mean((w) => w.foreignCores), 2)} cores, load average ${round(loadavg()[0] ?? 0, 1)}`;
  return [
    {
      benchmark: name,
      metric: `event-loop thread CPU per voice session-second, ${n} sessions${suffix}`,
      value: round(mean((w) => w.mainMsPerSessionS), 3),
      unit: 'ms CPU/s',
      note:
        `on-CPU time of the server's main thread (/proc schedstat, ns) over ${windows.length} windows of ${WINDOW_MS / 1000} s (${windows.map((w) => round(w.mainMsPerSessionS, 2)).join(', ')}), ` +
        `alternating with the other tree's windows when BENCH_BASELINE is set; all server threads ${round(mean((w) => w.allMsPerSessionS), 3)} ms/s; ` +
        `busiest other threads (first window) ${windows[0]!.threads.map((t) => `${t.name} ${round(t.ms, 3)}`).join(', ')} ms/s; ` +
        `per window ${round(mean((w) => w.gcCount), 1)} GC pauses (${round(mean((w) => w.gcMs), 0)} ms); ${load}`,
    },
    {
      benchmark: name,
      metric: `downlink jitter p99, ${n} voice sessions${suffix}`,
      value: round(mean((w) => w.jitterP99), 1),
      unit: 'ms',
      note:
        `target < 20 ms at 300 sessions; |inter-arrival − 20 ms| of downlink frames at the bench's clients, p99 per window (${windows.map((w) => round(w.jitterP99, 1)).join(', ')}), mean of windows; ` +
        `server pacer send lateness p99 ${round(mean((w) => w.pacerP99), 1)} ms (${windows.map((w) => round(w.pacerP99, 1)).join(', ')}); ` +
        `the event-loop thread runnable but waiting for a CPU ${Math.round(mean((w) => w.runQueue) * 100)} % of the window; meaningful on a quiet machine only: ${load}`,
    },
  ];
}

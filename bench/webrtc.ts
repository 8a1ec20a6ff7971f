import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { baseline, type Baseline } from './lib/baseline.ts';
import { withTimeout } from './lib/bench-client.ts';
import { ChildServer, processCpuMs, type ServerTiming } from './lib/child-server.ts';
import { LoadMeter } from './lib/load-meter.ts';
import { ramp, rampVerdict, windowsNote, type RampResult, type StepFigures } from './lib/ramp.ts';
import { percentile, progress, round } from './lib/stats.ts';
import { oneCall, type Connect } from './lib/webrtc-call.ts';
import { firstCallRows } from './lib/webrtc-first-call.ts';
import { startupRows } from './lib/webrtc-startup.ts';
import { LEAD_PACKETS, SPURT_GAP_MS, udpPortsOf, WireCapture, wireCaptureAvailable, wireDeviations } from './lib/wire-capture.ts';
import type { PeerCommand, PeerReply, PeerStats } from './lib/webrtc-peers.ts';
import type { Row } from './types.ts';
import { WORKER_DOWNLINK_LEAD_MS } from '../media/webrtc/worker-peer.ts';
import { PACKET_BURST_MS } from '../media/webrtc/packet-pacer.ts';

/**
 * The WebRTC transport (issue 6) on loopback, WEBRTC_LOOPBACK_ONLY=1, with the instant fake ASR
 * and TTS (bench/lib/fake-voice-server.ts) and the local model at 0 ms/word: the whole media
 * pipeline runs (Opus decode to 16 kHz, jitter buffer, VAD, endpointer, Opus encode from 16 kHz,
 * SRTP, the 20 ms pacer), only the models are free.
 *
 * - Offer → connected: signaling/testing/webrtc-test-peer.ts in this process, one call at a time.
 * - First call: the same, once per fresh server process, media workers lazy vs warm vs warm with
 *   their warm-up call (lib/webrtc-first-call.ts); start-up against BENCH_BASELINE (lib/webrtc-startup.ts).
 * - Concurrency: client peers in their own process (bench/lib/webrtc-peers.ts, forked with IPC):
 *   werift costs the client side about what it costs the server, and on the same event loop as
 *   the timing it would decide the jitter figure. Both processes share the machine's 2 cores.
 */

export const name = 'webrtc';

const CONNECT_WARMUP = 2;
const CONNECT_CALLS = 20;
/** BENCH_WEBRTC_STEPS="50,70" overrides the ramp (profiling, quick checks). */
/** The one-core ramp (server pinned): around the target. */
const PINNED_STEPS = process.env.BENCH_WEBRTC_PINNED_STEPS ? process.env.BENCH_WEBRTC_PINNED_STEPS.split(',').map(Number) : [35, 50, 60];
const LOAD_STEPS = process.env.BENCH_WEBRTC_STEPS ? process.env.BENCH_WEBRTC_STEPS.split(',').map(Number) : [10, 20, 35, 50, 70];
const LOAD_SETTLE_MS = 3000;
/** Long enough that a p99 is not decided by one or two garbage collections landing in it. */
const LOAD_WINDOW_MS = 20000;
const JITTER_TARGET_MS = 10;
/** Downlink jitter also measured on the wire (tcpdump on lo) when this machine allows it. */
const WIRE_CAPTURE = process.env.BENCH_WIRE_CAPTURE !== '0' && wireCaptureAvailable();
/** The whole concurrency ramp, however busy the machine. */
const LOAD_BUDGET_MS = 150000;
/** Client peer processes sharing the calls (see PeerGroup). */
const LOAD_PEER_PROCESSES = Number(process.env.BENCH_WEBRTC_PEER_PROCESSES ?? 2);
const LOAD_REPLY_TEXT = 'say the weather is mild and the sky is clear today.';
const PEERS_SCRIPT = fileURLToPath(new URL('./lib/webrtc-peers.ts', import.meta.url));
const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * BENCH_WEBRTC_PARTS="pinned" runs only some parts: connect, first-call (the first call on fresh
 * servers, lazy vs warm vs warm-called media workers), load (both cores), pinned (one core); and, not by
 * default, startup (spawned → listening of BENCH_BASELINE's servers against this tree's).
 */
const PARTS = new Set((process.env.BENCH_WEBRTC_PARTS ?? 'connect,first-call,load,pinned').split(','));
/** WEBRTC_MEDIA_WORKERS and WEBRTC_MEDIA_WORKER_NICE from the bench's environment reach the server (e.g. NICE=0: as without CAP_SYS_NICE). */
const PASSED_ENV = ['WEBRTC_MEDIA_WORKERS', 'WEBRTC_MEDIA_WORKER_NICE'].filter((k) => process.env[k] !== undefined);

function server(env: Record<string, string> = {}, cpu?: number, repo?: string): Promise<ChildServer> {
  const passed = Object.fromEntries(PASSED_ENV.map((k) => [k, process.env[k] as string]));
  return ChildServer.start({
    script: 'bench/lib/fake-voice-server.ts',
    env: { LOCAL_LLM_WORD_DELAY_MS: '0', WEBRTC_LOOPBACK_ONLY: '1', ...passed, ...env },
    ...(cpu === undefined ? {} : { cpu }),
    ...(repo === undefined ? {} : { repo }),
  });
}

export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  if (PARTS.has('connect')) rows.push(...(await connectLatency()));
  if (PARTS.has('first-call')) rows.push(...(await firstCallRows((env) => server(env))));
  if (PARTS.has('startup')) {
    const base = baseline();
    if (base) rows.push(...(await startupRows(base, REPO, (kind) => server(kind.env, undefined, kind.repo))));
    else progress('webrtc: startup part skipped (needs BENCH_BASELINE=<ref> to compare against)');
  }
  if (PARTS.has('load')) rows.push(...(await concurrency({ pinned: false, steps: LOAD_STEPS })));
  if (!PARTS.has('pinned')) return rows;
  if (!pinningPossible()) {
    progress('webrtc: one-core ramp skipped (needs taskset and at least 2 CPUs)');
    return rows;
  }
  // BENCH_BASELINE=<ref>: that commit's server through the same one-core ramp first, in this run.
  const base = baseline();
  if (base) rows.push(...(await concurrency({ pinned: true, steps: PINNED_STEPS, baseline: base })));
  rows.push(...(await concurrency({ pinned: true, steps: PINNED_STEPS })));
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Offer → connected

async function connectLatency(): Promise<Row[]> {
  progress('webrtc: starting fake-provider server for offer → connected');
  const s = await server();
  const samples: Connect[] = [];
  try {
    for (let i = 0; i < CONNECT_WARMUP + CONNECT_CALLS; i += 1) {
      const sample = await oneCall(s, i);
      if (i >= CONNECT_WARMUP) samples.push(sample);
      await sleep(100);
    }
  } finally {
    await s.stop();
  }
  const p = (f: (c: Connect) => number, q: number): number => round(percentile(samples.map(f), q), 1);
  const note = `${samples.length} calls one after another on loopback after ${CONNECT_WARMUP} warm-up, client = signaling/testing/webrtc-test-peer.ts (werift) in the bench process, server in a child process`;
  return [
    {
      benchmark: name,
      metric: 'offer → connected p50',
      value: p((c) => c.connected, 50),
      unit: 'ms',
      note:
        `p95 ${p((c) => c.connected, 95)} ms; webrtc_offer sent → client RTCPeerConnection connected (ICE checks + DTLS); of which offer → webrtc_answer p50 ${p((c) => c.answer, 50)} ms ` +
        `(p95 ${p((c) => c.answer, 95)}: the server applies the offer, gathers its candidates and answers); ${note}`,
    },
    {
      benchmark: name,
      metric: 'offer → ready p50',
      value: p((c) => c.ready, 50),
      unit: 'ms',
      note:
        `p95 ${p((c) => c.ready, 95)} ms; ready is sent once the server's side is connected (on the control channel if open, else the socket); ` +
        `before the offer: start → webrtc_ice p50 ${p((c) => c.ice, 50)} ms, the client's own offer (its gathering) p50 ${p((c) => c.clientOffer, 50)} ms`,
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Concurrency

interface Step extends StepFigures {
  n: number;
  /** The same jitter measured on the wire (see wire-capture.ts), when tcpdump can capture. */
  wire?: { p50: number; p99: number; max: number; intervals: number; flows: number };
  p50: number;
  p99: number;
  max: number;
  intervals: number;
  packets: number;
  turns: number;
  splitSpurts: number;
  serverCores: number;
  mainCores: number;
  serverLag: ServerTiming;
  /** Share of the window the server's main thread sat runnable waiting for a CPU. */
  runQueue: number;
  peersCores: number;
  peersLagP99: number;
  benchCores: number;
  foreignCores: number;
}

/** The peer process and a strictly sequential request/reply over IPC. */
class Peers {
  private queue: Promise<unknown> = Promise.resolve();
  private constructor(readonly child: ChildProcess) {}

  static start(): Peers {
    const child = fork(PEERS_SCRIPT, [], { cwd: REPO, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: { ...process.env, LOG_LEVEL: 'silent' } });
    liveChildren.add(child);
    child.once('exit', () => liveChildren.delete(child));
    return new Peers(child);
  }

  get pid(): number {
    return this.child.pid as number;
  }

  cpuMs(): number {
    return processCpuMs(this.pid);
  }

  request(command: PeerCommand, timeoutMs = 120000): Promise<PeerReply & { ok: true }> {
    const next = this.queue.then(
      () =>
        withTimeout(
          new Promise<PeerReply>((resolve, reject) => {
            const onMessage = (reply: PeerReply): void => {
              this.child.off('exit', onExit);
              resolve(reply);
            };
            const onExit = (code: number | null): void => {
              this.child.off('message', onMessage);
              reject(new Error(`peer process exited (${code})`));
            };
            this.child.once('message', onMessage);
            this.child.once('exit', onExit);
            this.child.send(command);
          }),
          timeoutMs,
          `peer process: ${command.cmd}`,
        ).then((reply) => {
          if (!reply.ok) throw new Error(`peer process: ${reply.error}`);
          return reply;
        }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    await this.request({ cmd: 'close' }, 15000).catch(() => undefined);
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * The load generator as several peer processes (calls dealt round-robin). One process holding
 * every client peer measures its own garbage-collection pauses as downlink jitter: at 50 calls its
 * event loop was late by 4–5 ms at p99. Split, each process's heap and pauses are smaller.
 */
class PeerGroup {
  private dealt = 0;
  private constructor(private readonly members: Peers[]) {}

  static start(processes: number): PeerGroup {
    return new PeerGroup(Array.from({ length: processes }, () => Peers.start()));
  }

  get pids(): number[] {
    return this.members.map((p) => p.pid);
  }

  cpuMs(): number {
    return this.members.reduce((sum, p) => sum + p.cpuMs(), 0);
  }

  async open(count: number, wsUrl: string, apiKey: string, prefix: string): Promise<number> {
    const shares = this.members.map(() => 0);
    for (let i = 0; i < count; i += 1) shares[(this.dealt + i) % shares.length]! += 1;
    this.dealt += count;
    const replies = await Promise.all(
      this.members.map((p, i) => (shares[i]! > 0 ? p.request({ cmd: 'open', count: shares[i]!, wsUrl, apiKey, prefix: `${prefix}-p${i}` }) : Promise.resolve({ ok: true as const, opened: 0 }))),
    );
    return replies.reduce((sum, r) => sum + (r.opened ?? 0), 0);
  }

  async record(): Promise<void> {
    await Promise.all(this.members.map((p) => p.request({ cmd: 'record' })));
  }

  async stop(): Promise<PeerStats> {
    const all = (await Promise.all(this.members.map((p) => p.request({ cmd: 'stop' })))).map((r) => r.stats as PeerStats);
    return {
      deviations: all.flatMap((s) => s.deviations),
      packets: all.reduce((a, s) => a + s.packets, 0),
      turns: all.reduce((a, s) => a + s.turns, 0),
      spurts: all.reduce((a, s) => a + s.spurts, 0),
      cpuMs: all.reduce((a, s) => a + s.cpuMs, 0),
      wallMs: Math.max(...all.map((s) => s.wallMs)),
      lagP99: Math.max(...all.map((s) => s.lagP99)),
      lagMax: Math.max(...all.map((s) => s.lagMax)),
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((p) => p.stop()));
  }
}

const liveChildren = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of liveChildren) c.kill('SIGKILL');
});

/**
 * "Per core", measured rather than divided: the server process (every thread: main, media
 * workers, libuv) pinned to CPU 1 and the client peer processes to CPU 0, so the server has
 * exactly one core and the load generator never competes with it.
 */
function pinningPossible(): boolean {
  return availableParallelism() >= 2 && spawnSync('taskset', ['-V']).status === 0;
}

function pin(pid: number, cpu: number): void {
  const r = spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)]);
  if (r.status !== 0) throw new Error(`taskset failed for ${pid}: ${String(r.stderr)}`);
}

async function concurrency(o: { pinned: boolean; steps: number[]; baseline?: Baseline }): Promise<Row[]> {
  const tree = o.baseline ? ` baseline ${o.baseline.ref} (${o.baseline.sha.slice(0, 7)})` : '';
  progress(`webrtc: starting fake-provider server${tree} and the peer processes for concurrency${o.pinned ? ' (server pinned to one core)' : ''}`);
  // Pinned: started on CPU 1 (it sizes its media workers for one core), the peers moved to CPU 0.
  const s = await server({ BENCH_FAKE_TRANSCRIPT: LOAD_REPLY_TEXT, MAX_SESSIONS: '1000', START_TIMEOUT_MS: '20000', ...o.baseline?.env }, o.pinned ? 1 : undefined, o.baseline?.dir);
  const peers = PeerGroup.start(LOAD_PEER_PROCESSES);
  let open = 0;
  try {
    if (o.pinned) for (const pid of peers.pids) pin(pid, 0);
    const result = await ramp<Step>({
      label: `webrtc concurrency${o.pinned ? ', server on one core' : ''}${tree}`,
      unit: 'calls',
      steps: o.steps,
      target: JITTER_TARGET_MS,
      budgetMs: LOAD_BUDGET_MS,
      settleMs: LOAD_SETTLE_MS,
      oursCpuMs: () => s.cpuMs() + peers.cpuMs(),
      grow: async (n) => {
        const t0 = performance.now();
        const opened = await peers.open(n - open, s.wsUrl, s.apiKey, `bench-rtc-load-${n}`);
        progress(`webrtc: ${opened} calls connected in ${round((performance.now() - t0) / 1000, 1)} s (${open + opened} open)`);
        open += opened;
      },
      measure: (n) => measureWindow(s, peers, n, o.pinned),
      cpuStepsAfterLimit: 2,
      extraStop: (step) =>
        step.peersCores > 0.9 * LOAD_PEER_PROCESSES ? `stopped at ${step.n} calls: the client peer processes are saturated (the load generator, not the server, is the limit here)` : undefined,
    });
    return o.pinned ? pinnedRows(result, tree) : concurrencyRows(result);
  } finally {
    await peers.close();
    await s.stop();
  }
}

async function measureWindow(s: ChildServer, peers: PeerGroup, n: number, pinned: boolean): Promise<Step> {
  let capture: WireCapture | undefined;
  const load = new LoadMeter(() => s.cpuMs() + peers.cpuMs() + (capture ? processCpuMs(capture.pid) : 0));
  await s.eventLoopDelay();
  const serverPorts = WIRE_CAPTURE ? udpPortsOf(s.pid) : undefined;
  if (WIRE_CAPTURE) capture = await WireCapture.start(pinned ? 0 : undefined);
  await peers.record();
  const cpu0 = s.cpuMs();
  const main0 = s.mainThreadCpuMs();
  const queue0 = s.mainThreadRunQueueMs();
  const peers0 = peers.cpuMs();
  const t0 = performance.now();
  load.begin();
  await sleep(LOAD_WINDOW_MS);
  load.end();
  const wall = performance.now() - t0;
  const cpu = s.cpuMs() - cpu0;
  const main = s.mainThreadCpuMs() - main0;
  const queue = s.mainThreadRunQueueMs() - queue0;
  const peersCpu = peers.cpuMs() - peers0;
  const stats = await peers.stop();
  const onWire = capture && serverPorts ? wireDeviations(await capture.stop(), serverPorts, SPURT_GAP_MS, LEAD_PACKETS) : undefined;
  const serverLag = await s.eventLoopDelay();
  if (stats.deviations.length === 0) throw new Error('no downlink RTP during the measurement window');
  return {
    n,
    p50: percentile(stats.deviations, 50),
    p99: percentile(stats.deviations, 99),
    max: Math.max(...stats.deviations),
    intervals: stats.deviations.length,
    ...(onWire && onWire.deviations.length > 0
      ? { wire: { p50: percentile(onWire.deviations, 50), p99: percentile(onWire.deviations, 99), max: Math.max(...onWire.deviations), intervals: onWire.deviations.length, flows: onWire.flows } }
      : {}),
    packets: stats.packets,
    turns: stats.turns,
    splitSpurts: Math.max(0, stats.spurts - stats.turns),
    serverCores: cpu / wall,
    mainCores: main / wall,
    serverLag,
    serverPacerP99: serverLag.pacer.p99,
    runQueue: queue / wall,
    peersCores: peersCpu / wall,
    peersLagP99: stats.lagP99,
    benchCores: load.clientCores,
    foreignCores: load.foreignCores,
  };
}

function concurrencyRows(result: RampResult<Step>): Row[] {
  const rows: Row[] = [];
  const steps = result.steps;
  for (const st of steps) {
    const busy = (st.foreignCores > 0.15 ? ' (MACHINE BUSY)' : '') + (result.limitAt !== undefined && st.n > result.limitAt ? '; past the jitter limit, one window, for the CPU figures' : '');
    rows.push({
      benchmark: name,
      metric: `downlink packet jitter p99, ${st.n} WebRTC calls`,
      value: round(st.p99, 2),
      unit: 'ms',
      note:
        `target < ${JITTER_TARGET_MS} ms; p50 ${round(st.p50, 1)}, max ${round(st.max, 1)} ms over ${st.intervals} intervals; ${wireNote(st)}${round((st.packets / st.n / LOAD_WINDOW_MS) * 1000, 1)} packets/s/call, ` +
        `${st.turns} replies, ${st.splitSpurts} pauses > 150 ms inside replies; server-side RTP send lateness p99 ${st.serverLag.pacer.p99} ms, max ${st.serverLag.pacer.max} ms (${st.serverLag.pacer.n} frames${st.serverLag.workers ? `, paced in ${st.serverLag.workers} media worker${st.serverLag.workers > 1 ? 's' : ''}; the session pacer's handoff lateness p99 ${st.serverLag.handoff?.p99} ms, up to ${WORKER_DOWNLINK_LEAD_MS - PACKET_BURST_MS} ms of it absorbed by the worker's lead; worker GC pauses ${st.serverLag.workerGc?.count}, longest ${st.serverLag.workerGc?.maxMs} ms` : ', paced on the main thread'}); ` +
        `server ${round(st.serverCores, 2)} cores (event loop thread ${round(st.mainCores, 2)}; ` +
        `its event-loop delay p99 ${st.serverLag.p99} ms, max ${st.serverLag.max} ms; ${st.serverLag.gc.count} GC pauses, longest ${st.serverLag.gc.maxMs} ms; ` +
        `runnable but waiting for a CPU ${Math.round(st.runQueue * 100)} % of the window); client peers ${round(st.peersCores, 2)} cores in ${LOAD_PEER_PROCESSES} processes (worst event-loop delay p99 ${round(st.peersLagP99, 1)} ms); ` +
        `other processes ${round(st.foreignCores, 2)} cores${busy}${windowsNote(st)}`,
    });
  }
  const method =
    `each call streams a 6 s loop (twelve.wav then room tone) as Opus RTP in real time and gets a ≈3.3 s reply per loop (fake ASR/TTS, local model); ` +
    `jitter = |inter-arrival − 20 ms| of downlink RTP at the client peers, from the 5th packet of each talk spurt on; ${LOAD_WINDOW_MS / 1000} s windows after a ${LOAD_SETTLE_MS / 1000} s settle`;
  const v = rampVerdict(result, JITTER_TARGET_MS);
  rows.push({
    benchmark: name,
    metric: 'server CPU per WebRTC voice call (fake providers)',
    value: round(v.perUnitMs, 1),
    unit: 'ms CPU/s',
    note:
      `at ${v.at.n} calls: ${round(v.at.serverCores, 2)} cores / ${v.at.n} (all server threads, /proc); marginal ${round(v.marginalMs, 1)} ms/s per added call between ${steps[0]?.n} and ${v.at.n}; ` +
      `Opus decode + encode at 16 kHz (no resampling), SRTP both ways, jitter buffer, VAD, pacing, data channel; 10 ms/s = 1 % of a core; ${method}`,
  });
  rows.push({
    benchmark: name,
    metric: `concurrent WebRTC calls with jitter p99 < ${JITTER_TARGET_MS} ms, one process`,
    value: v.capacity,
    unit: 'calls',
    note:
      `target ≥ 50 per core; ${v.detail}; projected from the marginal CPU ≈ ${Math.floor(1000 / v.marginalMs)} calls per fully used core. ` +
      `Like with like: LiveKit's ≈6 voice agents per core (their load test: 25 agents on 4 cores) runs Silero VAD and a turn-detector model in-process and calls STT/LLM/TTS services; ` +
      `this figure has no model at all (fvad instead of Silero, instant fake ASR/TTS), so it bounds the transport and pipeline only; the voice rows "local providers" give a models-in-the-box figure`,
  });
  return rows;
}

function wireNote(st: Step): string {
  return st.wire ? `on the wire (tcpdump on lo, kernel timestamps) p99 ${round(st.wire.p99, 2)}, p50 ${round(st.wire.p50, 1)}, max ${round(st.wire.max, 1)} ms over ${st.wire.intervals} intervals of ${st.wire.flows} flows; ` : '';
}

/** `tree`: '' for this checkout, else the baseline's label, added to each metric. */
function pinnedRows(result: RampResult<Step>, tree: string): Row[] {
  const rows: Row[] = result.steps.map((st) => ({
    benchmark: name,
    metric: `one core: downlink packet jitter p99, ${st.n} WebRTC calls${tree}`,
    value: round(st.p99, 2),
    unit: 'ms',
    note:
      `server started on one CPU (taskset -c 1), client peers moved to the other; p50 ${round(st.p50, 1)}, max ${round(st.max, 1)} ms over ${st.intervals} intervals; ${wireNote(st)}` +
      `server RTP send lateness p99 ${st.serverLag.pacer.p99} ms (worker GC pauses ${st.serverLag.workerGc?.count ?? 0}, longest ${st.serverLag.workerGc?.maxMs ?? 0} ms); server ${round(st.serverCores, 2)} of its 1 core (main thread ${round(st.mainCores, 2)}, runnable but waiting ${Math.round(st.runQueue * 100)} %); ` +
      `${st.serverLag.gc.count} main-thread GC pauses, longest ${st.serverLag.gc.maxMs} ms; client peers ${round(st.peersCores, 2)} cores; other processes ${round(st.foreignCores, 2)} cores` +
      `${result.limitAt !== undefined && st.n > result.limitAt ? '; past the jitter limit, one window, for the CPU figures' : ''}${windowsNote(st)}`,
  }));
  const v = rampVerdict(result, JITTER_TARGET_MS);
  rows.push({
    benchmark: name,
    metric: `one core: concurrent WebRTC calls with jitter p99 < ${JITTER_TARGET_MS} ms${tree}`,
    value: v.capacity,
    unit: 'calls',
    note: `target ≥ 60 per core; the whole server on one CPU; media worker nice ${process.env.WEBRTC_MEDIA_WORKER_NICE ?? '-10 (the default; applied only with CAP_SYS_NICE)'}; ${v.detail}`,
  });
  return rows;
}

import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { endpointerOptions, silenceMsForThreshold } from '../media/endpointer.ts';
import { concat } from '../media/testing/audio-stream.ts';
import { endAligned, fixture, startAligned, tone, RATE } from './lib/audio.ts';
import { baseline } from './lib/baseline.ts';
import { ChildServer, type ServerTiming } from './lib/child-server.ts';
import { LoadMeter, waitForQuiet } from './lib/load-meter.ts';
import { ramp, rampVerdict, windowsNote, type RampResult, type StepFigures } from './lib/ramp.ts';
import { percentile, progress, round } from './lib/stats.ts';
import { HOLD_RULE, sessionsPerCore, talkingLoad } from './lib/talking-load.ts';
import { utterance, type Utterance } from './lib/utterance.ts';
import { FRAME_MS, toFrames, VoiceClient } from './lib/voice-client.ts';
import type { Row } from './types.ts';

/**
 * The voice pipeline over WebSocket (issue 3), with instant fake ASR and TTS (bench/lib/
 * fake-providers.ts) and the local model at LOCAL_LLM_WORD_DELAY_MS=0 unless said otherwise:
 *
 * - server time from the end-of-turn decision to the first downlink audio byte;
 * - end-of-turn delay after the last voiced sample at turn_end_threshold 0.05, default, 0.5;
 * - barge-in: speech onset in the uplink → `interrupted` received, and → last downlink audio frame;
 * - CPU per real-time voice session and concurrent sessions with downlink jitter p99 < 20 ms;
 * - with the local providers (pocketsphinx + flite): end of speech → first audio, end to end.
 *
 * Every server is a child process (bench/lib/child-server.ts); the fake-provider server is
 * bench/lib/fake-voice-server.ts (signaling/server.ts startServer with provider overrides).
 * Uplink audio is sent like an open microphone: a 20 ms PCM16 frame every 20 ms on one shared
 * 1 ms clock, room tone between clips (bench/lib/voice-client.ts). Times are taken in this
 * process with performance.now(): send time of a frame, arrival time of a frame.
 */

export const name = 'voice';

const SPEECH = 'twelve.wav';
const BARGE_SPEECH = 'name.wav';
const THRESHOLDS: Array<number | undefined> = [0.05, undefined, 0.5];
const EOT_SESSIONS_PER_THRESHOLD = 3;
const EOT_UTTERANCES_PER_SESSION = 7;
const BARGE_SESSIONS = 4;
const BARGE_TRIALS_PER_SESSION = 5;
const LOAD_STEPS = [25, 50, 100, 150, 200, 300];
const LOAD_SETTLE_MS = 3000;
/**
 * A step's p99 is set by how often the server stalls 20 ms or more (see WHOLE_FRAME_MS), a few
 * times a second near the limit: over 8 s the same server read 16 and 58 ms at 300 sessions in
 * two runs. Three times as long a window makes a step's verdict a measure rather than a draw.
 */
const LOAD_WINDOW_MS = 24000;
/**
 * A deviation this large is a frame held a whole frame or more: the pacer sends it with the next
 * one, due by then too (a 0 ms interval), so once 1 % of intervals are such pairs the p99 reads
 * 20 ms whatever the stalls' length. Their share says how far past the line a step is.
 */
const WHOLE_FRAME_MS = 19.5;
const LOAD_JITTER_TARGET_MS = 20;
/** The whole concurrency ramp, however busy the machine. */
const LOAD_BUDGET_MS = 300000;
const LOCAL_UTTERANCES = 10;
/** A reply long enough to be barged into (about 14 s of fake speech). */
const LONG_REPLY = `say ${'the quick brown fox jumps over the lazy dog and runs far away, '.repeat(3)}`;
/** The concurrency load's transcript: the local model repeats it, ≈ 3.3 s of fake speech. */
const LOAD_REPLY_TEXT = 'say the weather is mild and the sky is clear today.';

const AUDIO = { sr: RATE, output_encoding: 'pcm16', output_sr: RATE };
const idle = toFrames(tone(RATE));

let sessionCounter = 0;
function start(server: ChildServer, mode: Record<string, unknown> = {}): Record<string, unknown> {
  sessionCounter += 1;
  return { session_id: `bench-voice-${process.pid}-${sessionCounter}`, api_key: server.apiKey, mode: { kind: 'service', greeting: false, ...mode }, audio: AUDIO };
}

function fakeServer(env: Record<string, string> = {}): Promise<ChildServer> {
  return ChildServer.start({ script: 'bench/lib/fake-voice-server.ts', env: { LOCAL_LLM_WORD_DELAY_MS: '0', ...env } });
}

/** BENCH_VOICE_PARTS=latency,capacity,local,local-flow,local-load runs some of it (all by default). */
const PARTS = new Set((process.env.BENCH_VOICE_PARTS ?? 'latency,capacity,local,local-flow,local-load').split(','));

export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  if (PARTS.has('latency')) rows.push(...(await fakeLatency()));
  if (PARTS.has('capacity')) rows.push(...(await fakeConcurrency()));
  if (PARTS.has('local')) rows.push(...(await localProviders()));
  // Flow mode (mode.flow): the reply starts eagerly at half the end-of-turn silence.
  if (PARTS.has('local-flow')) rows.push(...(await localProviders({ flow: true }, 'local providers, flow mode')));
  if (PARTS.has('local-load')) rows.push(...(await localLoad()));
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Latency with the fake providers

async function fakeLatency(): Promise<Row[]> {
  progress('voice: starting fake-provider server for latency');
  const server = await fakeServer();
  const speech = toFrames(endAligned(fixture(SPEECH)));
  const clients: VoiceClient[] = [];
  try {
    // Warm-up: JIT, lazy modules, first VAD instance.
    const warm = await VoiceClient.open(server.wsUrl, start(server), { idle });
    clients.push(warm);
    warm.mic.start();
    for (let i = 0; i < 2; i += 1) await utterance(warm, speech, undefined);
    await warm.close();

    progress(`voice: end of turn: ${THRESHOLDS.length} thresholds × ${EOT_SESSIONS_PER_THRESHOLD} sessions × ${EOT_UTTERANCES_PER_SESSION} utterances, in parallel`);
    const groups = await Promise.all(
      THRESHOLDS.flatMap((threshold) =>
        Array.from({ length: EOT_SESSIONS_PER_THRESHOLD }, async () => {
          const client = await VoiceClient.open(server.wsUrl, start(server, threshold === undefined ? {} : { turn_end_threshold: threshold }), { idle });
          clients.push(client);
          client.mic.start(Math.random() * 20);
          const out: Utterance[] = [];
          for (let i = 0; i < EOT_UTTERANCES_PER_SESSION; i += 1) {
            await sleep(150 + Math.random() * 300);
            out.push(await utterance(client, speech, threshold));
          }
          await client.close();
          return out;
        }),
      ),
    );
    const utterances = groups.flat();

    progress(`voice: barge-in: ${BARGE_SESSIONS} sessions × ${BARGE_TRIALS_PER_SESSION} trials, in parallel`);
    const bargeSpeech = toFrames(startAligned(fixture(BARGE_SPEECH)));
    const barges = (
      await Promise.all(
        Array.from({ length: BARGE_SESSIONS }, async () => {
          const client = await VoiceClient.open(server.wsUrl, start(server), { idle });
          clients.push(client);
          client.mic.start(Math.random() * 20);
          const out: BargeIn[] = [];
          for (let i = 0; i < BARGE_TRIALS_PER_SESSION; i += 1) out.push(await bargeIn(client, bargeSpeech, i));
          await client.close();
          return out;
        }),
      )
    ).flat();
    return latencyRows(utterances, barges);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await server.stop();
  }
}

interface BargeIn {
  toInterrupted: number;
  toLastAudio: number;
  /** Audio frames received after `interrupted` (should be none). */
  afterInterrupted: number;
}

/**
 * A long reply is started (inject_context role user), 0.3–0.8 s into its audio the user speaks
 * (the clip starts on a frame boundary: the send time of that frame is the speech onset).
 */
async function bargeIn(client: VoiceClient, speech: readonly Buffer[], trial: number): Promise<BargeIn> {
  const mark = client.mark;
  const sentAt = performance.now();
  client.send({ type: 'inject_context', message_id: `barge-${trial}-${Math.random()}`, role: 'user', text: LONG_REPLY });
  await client.firstAudioAfter(sentAt, 8000);
  await sleep(300 + Math.random() * 500);
  const segment = client.mic.play(speech);
  const interrupted = await client.waitFor('interrupted', 5000, mark);
  await sleep(300);
  const firstSent = segment.sentAt[0];
  if (firstSent === undefined) throw new Error('interrupted before the barge-in speech was sent');
  // A frame carries the 20 ms captured before it is sent: the speech began one frame earlier.
  const onset = firstSent - FRAME_MS;
  const before = client.audioAt.filter((t) => t <= interrupted.at);
  const lastAudio = before.at(-1) ?? interrupted.at;
  const after = client.audioAt.filter((t) => t > interrupted.at).length;
  // Back to a quiet floor: drop the rest of the clip, forget the half-heard utterance.
  client.mic.clear();
  client.send({ type: 'reset' });
  await sleep(400);
  client.audioAt.splice(0, client.audioAt.length);
  return { toInterrupted: interrupted.at - onset, toLastAudio: lastAudio - onset, afterInterrupted: after };
}

function latencyRows(utterances: Utterance[], barges: BargeIn[]): Row[] {
  const rows: Row[] = [];
  const row = (metric: string, value: number, unit: string, note: string): void => {
    rows.push({ benchmark: name, metric, value: round(value, 1), unit, note });
  };
  const pick = (f: (u: Utterance) => number, threshold?: number | 'all'): number[] =>
    utterances.filter((u) => threshold === 'all' || u.threshold === threshold).map(f);
  const p = (xs: number[], q: number): number => percentile(xs, q);

  const all = utterances.length;
  const wrong = utterances.filter((u) => u.transcript !== 'what is twelve times seven').length;
  const dft = silenceMsForThreshold(undefined);
  const share = pick((u) => u.decidingFrameToAudio, 'all');
  const asrToAudio = pick((u) => u.asrToAudio, 'all');
  row(
    'end-of-turn decision → first audio byte p50 (server share, upper bound)',
    p(share, 50),
    'ms',
    `target p50 < 5 ms. From the send time of the uplink frame that completed the end-of-turn silence (the last frame sent before asr arrived) to the first downlink audio frame received: ` +
      `server time plus two loopback hops (valid while under 20 ms: then the next frame has not gone yet); p95 ${round(p(share, 95), 1)} ms, max ${round(Math.max(...share), 1)} ms; ` +
      `${all} utterances (all thresholds) on ${THRESHOLDS.length * EOT_SESSIONS_PER_THRESHOLD} concurrent sessions; ` +
      `asr received → first audio received (same socket, in order) p50 ${round(p(asrToAudio, 50), 2)} ms, p95 ${round(p(asrToAudio, 95), 2)} ms`,
  );
  const eosAudio = pick((u) => u.eosToAudio);
  row(
    'uplink end of speech → first audio byte p50, default threshold',
    p(eosAudio, 50),
    'ms',
    `p95 ${round(p(eosAudio, 95), 1)} ms over ${eosAudio.length} utterances; fake ASR/TTS answer instantly, local model at 0 ms/word; ` +
      `minus the configured end silence (${dft} ms at the default 0.45) = ${round(p(eosAudio, 50) - dft, 1)} ms p50: VAD hangover (see the end-of-turn rows) + server + loopback`,
  );
  for (const threshold of THRESHOLDS) {
    const xs = pick((u) => u.eosToAsr, threshold);
    const silence = silenceMsForThreshold(threshold);
    const label = threshold === undefined ? 'default (0.45)' : String(threshold);
    row(
      `end-of-turn delay after last voiced sample p50, turn_end_threshold ${label}`,
      p(xs, 50),
      'ms',
      `${threshold === undefined ? 'target ≤ 300 ms; ' : ''}p95 ${round(p(xs, 95), 1)} ms over ${xs.length} utterances; configured trailing silence ${silence} ms (endpointer.ts: 200 + (0.5 − t) × 1200); ` +
        `measured from the send time of the frame holding the clip's last sample (${SPEECH}, speech runs to its end; room tone after) to asr received; fake ASR is instant so asr ≈ the decision; ` +
        `overhang p50 ${round(p(xs, 50) - silence, 1)} ms: fvad's hangover (offline, fvad mode 3 calls the first 6 frames = 120 ms of room tone after this clip voiced) + loopback`,
    );
  }
  if (wrong > 0) row('utterances with an unexpected transcript', wrong, 'count', 'fake ASR always answers the same text: a different asr means a turn was cut or merged');

  const toInt = barges.map((b) => b.toInterrupted);
  const toLast = barges.map((b) => b.toLastAudio);
  const stray = barges.reduce((n, b) => n + b.afterInterrupted, 0);
  row(
    'barge-in: speech onset → interrupted received p50',
    p(toInt, 50),
    'ms',
    `target < 150 ms; p95 ${round(p(toInt, 95), 1)} ms, max ${round(Math.max(...toInt), 1)} ms over ${barges.length} trials (${BARGE_SESSIONS} sessions in parallel); ` +
      `onset = send time of the first frame of ${BARGE_SPEECH} (the clip starts on a frame boundary) − 20 ms (a frame is sent once its 20 ms are captured), 0.3–0.8 s into a long reply; ` +
      `by design ≥ 100 ms (bargeInMinSpeechMs: 100 ms of voiced audio before speech counts as barge-in)`,
  );
  row(
    'barge-in: speech onset → last downlink audio frame p50',
    p(toLast, 50),
    'ms',
    `target < 150 ms; p95 ${round(p(toLast, 95), 1)} ms; the pacer stops before interrupted is sent, so the last frame arrives just before it; ` +
      `${stray} audio frames arrived after interrupted in all trials; the client still holds up to the pacer's 60 ms lead, which interrupted {clear:true} tells it to drop`,
  );
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Concurrency with the fake providers

export interface Step extends StepFigures {
  n: number;
  p50: number;
  p99: number;
  max: number;
  deviations: number;
  /** Share of intervals off by a whole frame or more: a frame held ≥ 20 ms leaves with the next one. */
  wholeFrame: number;
  frames: number;
  turns: number;
  interrupted: number;
  serverCores: number;
  mainCores: number;
  clientCores: number;
  foreignCores: number;
  clientLagP99: number;
  /** The server's own event-loop delay over the window (bench/lib/fake-voice-server.ts). */
  serverLag: ServerTiming;
  /** Share of the window the server's main thread sat runnable waiting for a CPU. */
  runQueue: number;
}

async function fakeConcurrency(): Promise<Row[]> {
  progress('voice: starting fake-provider server for concurrency');
  const server = await fakeServer({ BENCH_FAKE_TRANSCRIPT: LOAD_REPLY_TEXT, MAX_SESSIONS: '2000' });
  const sessions: VoiceClient[] = [];
  try {
    const result = await ramp<Step>({
      label: 'voice concurrency',
      unit: 'sessions',
      steps: LOAD_STEPS,
      target: LOAD_JITTER_TARGET_MS,
      budgetMs: LOAD_BUDGET_MS,
      settleMs: LOAD_SETTLE_MS,
      oursCpuMs: () => server.cpuMs(),
      grow: (n) => growLoad(server, sessions, n),
      measure: () => measureWindow(server, sessions),
      cpuStepsAfterLimit: 1,
    });
    return concurrencyRows(result);
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
    await server.stop();
  }
}

/** Opens sessions up to `n`, each talking the 6 s loop (speech, then room tone) from a random point. */
async function growLoad(server: ChildServer, sessions: VoiceClient[], n: number): Promise<void> {
  const clip = endAligned(fixture(SPEECH));
  const loop = toFrames(concat(clip, tone(RATE * 6 - clip.length)));
  while (sessions.length < n) {
    const opened = await Promise.all(Array.from({ length: Math.min(25, n - sessions.length) }, () => VoiceClient.open(server.wsUrl, start(server), { idle, lean: true })));
    for (const c of opened) {
      c.mic.setLoop(loop, Math.floor(Math.random() * loop.length));
      c.mic.start(Math.random() * 20);
      sessions.push(c);
    }
  }
}

/**
 * One load step outside the ramp: `n` sessions of the concurrency load on a fake-provider server
 * started with `env` (the turn-taking bench compares VAD_PROVIDER=silero and webrtc this way).
 */
export async function fixedLoad(env: Record<string, string>, n: number): Promise<Step> {
  const server = await fakeServer({ BENCH_FAKE_TRANSCRIPT: LOAD_REPLY_TEXT, MAX_SESSIONS: '2000', ...env });
  const sessions: VoiceClient[] = [];
  try {
    await growLoad(server, sessions, n);
    await sleep(LOAD_SETTLE_MS);
    return await measureWindow(server, sessions);
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
    await server.stop();
  }
}

async function measureWindow(server: ChildServer, sessions: VoiceClient[]): Promise<Step> {
  for (const s of sessions) {
    s.jitter.deviations.length = 0;
    s.jitter.frames = 0;
    s.jitter.turns = 0;
    s.jitter.interrupted = 0;
    s.recording = true;
  }
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  const load = new LoadMeter(() => server.cpuMs());
  await server.eventLoopDelay(); // resets the server's histograms
  const cpu0 = server.cpuMs();
  const main0 = server.mainThreadCpuMs();
  const queue0 = server.mainThreadRunQueueMs();
  const t0 = performance.now();
  load.begin();
  await sleep(LOAD_WINDOW_MS);
  load.end();
  const wall = performance.now() - t0;
  const cpu = server.cpuMs() - cpu0;
  const main = server.mainThreadCpuMs() - main0;
  const queue = server.mainThreadRunQueueMs() - queue0;
  const serverLag = await server.eventLoopDelay();
  lag.disable();
  for (const s of sessions) s.recording = false;
  const deviations = sessions.flatMap((s) => s.jitter.deviations);
  if (deviations.length === 0) throw new Error('no downlink audio during the measurement window');
  return {
    n: sessions.length,
    p50: percentile(deviations, 50),
    p99: percentile(deviations, 99),
    max: deviations.reduce((a, d) => Math.max(a, d), 0),
    deviations: deviations.length,
    wholeFrame: deviations.filter((d) => d >= WHOLE_FRAME_MS).length / deviations.length,
    frames: sessions.reduce((a, s) => a + s.jitter.frames, 0),
    turns: sessions.reduce((a, s) => a + s.jitter.turns, 0),
    interrupted: sessions.reduce((a, s) => a + s.jitter.interrupted, 0),
    serverCores: cpu / wall,
    mainCores: main / wall,
    clientCores: load.clientCores,
    foreignCores: load.foreignCores,
    clientLagP99: lag.percentile(99) / 1e6,
    serverLag,
    runQueue: queue / wall,
    serverPacerP99: serverLag.pacer.p99,
  };
}

function concurrencyRows(result: RampResult<Step>): Row[] {
  const rows: Row[] = [];
  const steps = result.steps;
  const method =
    `each session streams a 6 s loop (${SPEECH} then room tone) in real time and gets a ≈3.3 s reply per loop (fake ASR/TTS, local model); ` +
    `jitter = |inter-arrival − 20 ms| of downlink frames at the client, from the 5th frame of each reply on (the pacer sends its 60 ms lead at once), over ${LOAD_WINDOW_MS / 1000} s after a ${LOAD_SETTLE_MS / 1000} s settle`;
  for (const s of steps) {
    const busy = (s.foreignCores > 0.15 ? ' (MACHINE BUSY)' : '') + (result.limitAt !== undefined && s.n > result.limitAt ? '; past the jitter limit, one window, for the CPU figures' : '');
    rows.push({
      benchmark: name,
      metric: `downlink frame jitter p99, ${s.n} voice sessions`,
      value: round(s.p99, 2),
      unit: 'ms',
      note:
        `target < ${LOAD_JITTER_TARGET_MS} ms; p50 ${round(s.p50, 1)}, max ${round(s.max, 1)} ms over ${s.deviations} intervals, ${round(s.wholeFrame * 100, 2)} % of them off by a whole frame or more; ${round((s.frames / s.n / LOAD_WINDOW_MS) * 1000, 1)} frames/s/session, ` +
        `${s.turns} replies, ${s.interrupted} interrupted; server-side pacer send lateness p99 ${s.serverLag.pacer.p99} ms, max ${s.serverLag.pacer.max} ms (${s.serverLag.pacer.n} frames); ` +
        `server ${round(s.serverCores, 2)} cores (event loop thread ${round(s.mainCores, 2)}; its event-loop delay p99 ${s.serverLag.p99} ms, max ${s.serverLag.max} ms; ${s.serverLag.gc.count} GC pauses, longest ${s.serverLag.gc.maxMs} ms; ` +
        `runnable but waiting for a CPU ${Math.round(s.runQueue * 100)} % of the window); ` +
        `load generator (this process, same 2 cores) ${round(s.clientCores, 2)} cores, its event-loop delay p99 ${round(s.clientLagP99, 1)} ms; other processes ${round(s.foreignCores, 2)} cores${busy}${windowsNote(s)}`,
    });
  }
  const v = rampVerdict(result, LOAD_JITTER_TARGET_MS);
  rows.push({
    benchmark: name,
    metric: 'server CPU per real-time voice session (fake providers)',
    value: round(v.perUnitMs, 2),
    unit: 'ms CPU/s',
    note:
      `at ${v.at.n} sessions: ${round(v.at.serverCores, 2)} cores / ${v.at.n} (all server threads, /proc utime+stime); marginal ${round(v.marginalMs, 2)} ms/s per added session between ${steps[0]?.n} and ${v.at.n}; ` +
      `1 ms/s = 0.1 % of a core; ${method}`,
  });
  rows.push({
    benchmark: name,
    metric: `concurrent voice sessions with jitter p99 < ${LOAD_JITTER_TARGET_MS} ms, one process`,
    value: v.capacity,
    unit: 'sessions',
    note:
      `target ≥ 100 per core; ${v.detail}; one Node process is one event loop (≈ one core); projected from the marginal CPU: ≈ ${Math.floor(1000 / v.marginalMs)} sessions per fully used core; ` +
      `the load generator shares the 2 cores (see the step rows)`,
  });
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Local providers, end to end

/** One tree's local-provider server, its talking session and what it measured. */
interface LocalTree {
  who: string;
  server: ChildServer;
  client: VoiceClient;
  samples: Utterance[];
  cpuMs: number;
  wallMs: number;
}

/**
 * With BENCH_BASELINE, the baseline commit's server runs beside this tree's: blocks of
 * utterances alternate between the two (this, baseline, this, baseline), so both see the same
 * machine load. Each tree's CPU and wall time are counted over its own blocks only.
 */
async function localProviders(mode: Record<string, unknown> = {}, who = 'local providers'): Promise<Row[]> {
  const base = baseline();
  progress(`voice: starting a server with the local providers (pocketsphinx + flite)${base ? ` and one of ${base.ref}` : ''}`);
  const trees: LocalTree[] = [];
  try {
    const specs = [{ who, options: {} }, ...(base ? [{ who: `${who} [${base.ref} ${base.sha.slice(0, 7)}]`, options: { repo: base.dir, env: base.env } }] : [])];
    for (const spec of specs) {
      const server = await ChildServer.start(spec.options);
      let client: VoiceClient;
      try {
        // It warms the flite helper up after it listens (the recognisers are warm before it listens).
        await waitForQuiet(() => server.treeCpuMs());
        client = await VoiceClient.open(server.wsUrl, start(server, mode), { idle });
      } catch (error) {
        await server.stop();
        if (trees.length > 0) throw error;
        return [{ benchmark: name, metric: `${who}: end of speech → first audio`, value: '-', unit: '', note: `not run: ${error instanceof Error ? error.message : String(error)}` }];
      }
      trees.push({ who: spec.who, server, client, samples: [], cpuMs: 0, wallMs: 0 });
    }
    const speech = toFrames(endAligned(fixture(SPEECH)));
    for (const tree of trees) {
      tree.client.mic.start();
      await utterance(tree.client, speech, undefined);
    }
    const blocks = trees.length > 1 ? 2 : 1;
    for (let block = 0; block < blocks; block += 1) {
      for (const tree of trees) {
        const cpu0 = tree.server.treeCpuMs();
        const t0 = performance.now();
        for (let i = 0; i < LOCAL_UTTERANCES / blocks; i += 1) {
          await sleep(200);
          tree.samples.push(await utterance(tree.client, speech, undefined));
        }
        tree.cpuMs += tree.server.treeCpuMs() - cpu0;
        tree.wallMs += performance.now() - t0;
      }
    }
    return trees.flatMap((tree) => localRows(tree, mode));
  } finally {
    await Promise.all(trees.map((tree) => tree.client.close()));
    await Promise.all(trees.map((tree) => tree.server.stop()));
  }
}

function localRows({ who, samples, cpuMs: cpu, wallMs: wall }: LocalTree, mode: Record<string, unknown>): Row[] {
  const expected = JSON.parse(readFileSync(new URL('../fixtures/audio/transcripts.json', import.meta.url), 'utf8')) as Record<string, string>;
  const right = samples.filter((s) => s.transcript === expected[SPEECH]).length;
  const eosAudio = samples.map((s) => s.eosToAudio);
  const eosAsr = samples.map((s) => s.eosToAsr);
  const asrAudio = samples.map((s) => s.asrToAudio);
  const dft = silenceMsForThreshold(undefined);
  return [
    {
      benchmark: name,
      metric: `${who}: end of speech → first audio byte p50`,
      value: round(percentile(eosAudio, 50), 1),
      unit: 'ms',
      note:
        `pocketsphinx + flite + local model (0 ms/word), one session, ${samples.length} sequential utterances of ${SPEECH} after 1 warm-up; p95 ${round(percentile(eosAudio, 95), 1)} ms; ` +
        `of which end of speech → asr p50 ${round(percentile(eosAsr, 50), 1)} ms (${mode.flow ? `the eager reply starts after ${endpointerOptions(undefined, true).eagerSilenceMs} ms of silence, half the ${dft} ms end of turn, with the words recognised so far` : `${dft} ms configured silence + recognition`}) and asr → first audio p50 ${round(percentile(asrAudio, 50), 1)} ms (model + flite synthesis of the first sentence); ` +
        `${right}/${samples.length} transcripts exact`,
    },
    {
      benchmark: name,
      metric: `${who}: CPU per utterance, whole process tree`,
      value: Math.round(cpu / samples.length),
      unit: 'ms CPU',
      note:
        `server (its recogniser threads keep pocketsphinx decoders loaded) + flite helper, /proc utime+stime incl. reaped children, over the ${samples.length} utterances; ` +
        `${round(cpu / wall, 3)} cores while one session talked continuously (an utterance every ${round(wall / samples.length / 1000, 1)} s)`,
    },
    {
      benchmark: name,
      metric: `${who}: talking sessions per core (est.)`,
      value: Math.floor(wall / cpu),
      unit: 'sessions',
      note: `target ≥ 12; one core's time divided by the CPU one continuously talking session used (row above): sessions that talk like it, models in the box`,
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Local providers, many sessions talking on one core

/** BENCH_TALKING_STEPS: sessions talking at once, one step after another (the first is the reference). */
const TALKING_STEPS = (process.env.BENCH_TALKING_STEPS ?? '1,2,3,4,6,8,12').split(',').map(Number);
const TALKING_WINDOW_MS = Number(process.env.BENCH_TALKING_WINDOW_MS ?? 30000);

async function localLoad(): Promise<Row[]> {
  const expected = JSON.parse(readFileSync(new URL('../fixtures/audio/transcripts.json', import.meta.url), 'utf8')) as Record<string, string>;
  const steps = await talkingLoad({
    steps: TALKING_STEPS,
    windowMs: TALKING_WINDOW_MS,
    speech: toFrames(endAligned(fixture(SPEECH))),
    expected: expected[SPEECH] ?? '',
    idle,
    start: (server) => start(server),
    env: {},
  });
  const rows: Row[] = steps.map((s) => {
    const eos = s.samples.map((u) => u.eosToAudio);
    return {
      benchmark: name,
      metric: `local providers on one core, ${s.sessions} talking session${s.sessions === 1 ? '' : 's'}: end of speech → first audio p50 / p90`,
      value: `${round(percentile(eos, 50), 1)} / ${round(percentile(eos, 90), 1)}`,
      unit: 'ms',
      note:
        `${s.samples.length} utterances of ${SPEECH} over ${TALKING_WINDOW_MS / 1000} s, ${s.exact}/${s.samples.length} transcripts exact, ${s.holds ? 'holds' : 'does not hold'}; ` +
        `server tree ${round(s.cores, 2)} cores (taskset to one CPU), ${Math.round(s.cpuPerUtteranceMs)} ms CPU per utterance; the bench ${round(s.clientCores, 2)} cores, everything else ${round(s.foreignCores, 2)} cores`,
    };
  });
  rows.push({
    benchmark: name,
    metric: 'local providers: talking sessions per core',
    value: sessionsPerCore(steps),
    unit: 'sessions',
    note: `target ≥ 12; counted: the most sessions talking at once on a server confined to one CPU (steps ${TALKING_STEPS.join(', ')}) with ${HOLD_RULE}`,
  });
  return rows;
}

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { concat } from '../media/testing/audio-stream.ts';
import { endAligned, fixture, tone, RATE } from './lib/audio.ts';
import { closeSessions, openSessions, type BenchSession } from './lib/bench-client.ts';
import { ChildServer } from './lib/child-server.ts';
import { LoadMeter, waitForQuiet } from './lib/load-meter.ts';
import { median, progress, round } from './lib/stats.ts';
import { toFrames, VoiceClient } from './lib/voice-client.ts';
import type { Row } from './types.ts';

/**
 * What observability costs, side by side in one run. Four servers run at once, the same in all
 * but this: `off` measures nothing (ServerOverrides.observability = 'off'); `metrics` is the
 * default with LOG_LEVEL=warn (every metric, tracing hooks present but off, no per-turn log
 * line); `log` is the default at LOG_LEVEL=info (adds the per-turn log line); `tracing` is
 * `metrics` exporting OpenTelemetry spans to a collector (an OTLP/HTTP sink in this process).
 * Every server's stdout is a pipe this process reads, as a log collector would. The load
 * alternates between the servers in blocks, in a rotating order; each cost is the median over
 * blocks of the block's ratio to `off`, so a burst from another process skews one block only.
 *
 * - text: server CPU (main thread, nanosecond schedstat) per typed turn while TEXT_SESSIONS
 *   sessions each send one input_text per second;
 * - voice: server CPU (whole process) per second of a talking voice session (VAD, pacing, fake
 *   ASR/TTS, the local model) while VOICE_SESSIONS sessions talk in a loop; only the measured
 *   server's sessions talk in its block.
 *
 * Goals: metrics < 3 % CPU on both paths; tracing off < 2 % (its dormant hooks are inside the
 * `metrics` server's cost, so that figure bounds it).
 *
 * A busy machine makes those ratios noisy, so the same work is also timed in this process, where
 * nothing else runs between the clock readings: one turn's telemetry (counters, stage histograms,
 * the turn scope), a model stream through the measuring wrapper against the bare stream, and the
 * per-turn log line.
 */

export const name = 'observability';

const VARIANTS = ['off', 'metrics', 'log', 'tracing'] as const;
type Variant = (typeof VARIANTS)[number];
const TEXT_SESSIONS = 100;
const TEXT_BLOCKS = 30;
const VOICE_SESSIONS = 20;
const VOICE_BLOCKS = 8;
const VOICE_WINDOW_MS = 4000;
const VOICE_SETTLE_MS = 1500;
const LOAD_REPLY_TEXT = 'say the weather is mild and the sky is clear today.';

interface Cost {
  /** Per-block figures (ms of CPU per unit), in block order. */
  mainPerUnit: number[];
  processPerUnit: number[];
  units: number;
  mainMs: number;
  processMs: number;
}

export async function run(): Promise<Row[]> {
  const sink = await startSink();
  try {
    const micro = await microCosts();
    const text = await measureText(sink.url);
    const voice = await measureVoice(sink.url);
    return [...micro, ...rows('text', 'ms CPU per turn', 'mainPerUnit', text), ...rows('voice', 'ms CPU per session-second', 'processPerUnit', voice), sinkRow(sink.spans())];
  } finally {
    await sink.close();
  }
}

async function startServers(sinkUrl: string, env: Record<string, string> = {}): Promise<ChildServer[]> {
  const variantEnv: Record<Variant, Record<string, string>> = {
    off: { BENCH_OBSERVABILITY: 'off', LOG_LEVEL: 'warn' },
    metrics: { LOG_LEVEL: 'warn' },
    log: { LOG_LEVEL: 'info' },
    tracing: { LOG_LEVEL: 'warn', OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl },
  };
  const servers: ChildServer[] = [];
  for (const v of VARIANTS) servers.push(await ChildServer.start({ script: 'bench/lib/fake-voice-server.ts', startTimeoutMs: 60000, env: { ...variantEnv[v], ...env } }));
  return servers;
}

function emptyCost(): Cost {
  return { mainPerUnit: [], processPerUnit: [], units: 0, mainMs: 0, processMs: 0 };
}

/** Runs `block` on one server, charging its CPU to that server's cost per unit of work it reports. */
async function charge(server: ChildServer, cost: Cost, block: () => Promise<number>): Promise<void> {
  const main0 = server.mainThreadCpuMs();
  const proc0 = server.cpuMs();
  const units = await block();
  const main = server.mainThreadCpuMs() - main0;
  const proc = server.cpuMs() - proc0;
  cost.units += units;
  cost.mainMs += main;
  cost.processMs += proc;
  cost.mainPerUnit.push(main / units);
  cost.processPerUnit.push(proc / units);
}

async function measureText(sinkUrl: string): Promise<Map<Variant, Cost>> {
  progress(`observability: text: starting ${VARIANTS.length} servers (${VARIANTS.join(', ')})`);
  const servers = await startServers(sinkUrl);
  const costs = new Map<Variant, Cost>(VARIANTS.map((v) => [v, emptyCost()]));
  const sessions: BenchSession[][] = [];
  try {
    for (const [i, server] of servers.entries()) {
      await waitForQuiet(() => server.cpuMs());
      sessions.push(await openSessions(server.wsUrl, server.apiKey, TEXT_SESSIONS, `bench-obs-${VARIANTS[i]}`));
    }
    // Warm-up: JIT and the first turns of every session.
    for (const group of sessions) await textRound(group);
    const load = new LoadMeter(() => servers.reduce((a, s) => a + s.cpuMs(), 0));
    load.begin();
    for (let block = 0; block < TEXT_BLOCKS; block += 1) {
      for (const [i, v] of rotate(VARIANTS, block).map((v) => [VARIANTS.indexOf(v), v] as const)) {
        await charge(servers[i]!, costs.get(v)!, async () => {
          await textRound(sessions[i]!);
          return sessions[i]!.length;
        });
      }
    }
    load.end();
    progress(`observability: text done (other processes used ${load.foreignCores.toFixed(2)} cores)`);
  } finally {
    await Promise.all(sessions.map((g) => closeSessions(g)));
    await Promise.all(servers.map((s) => s.stop()));
  }
  return costs;
}

/** Every session sends one input_text, spread over a second; resolves when every reply is done. */
async function textRound(sessions: readonly BenchSession[]): Promise<void> {
  const pending: Promise<number>[] = [];
  const spreadMs = 1000 / sessions.length;
  for (const s of sessions) {
    pending.push(s.text('hello'));
    await sleep(spreadMs);
  }
  await Promise.all(pending);
}

async function measureVoice(sinkUrl: string): Promise<Map<Variant, Cost>> {
  progress(`observability: voice: starting ${VARIANTS.length} servers, ${VOICE_SESSIONS} talking sessions each`);
  const servers = await startServers(sinkUrl, { BENCH_FAKE_TRANSCRIPT: LOAD_REPLY_TEXT, LOCAL_LLM_WORD_DELAY_MS: '0' });
  const costs = new Map<Variant, Cost>(VARIANTS.map((v) => [v, emptyCost()]));
  const clients: VoiceClient[][] = [];
  const clip = endAligned(fixture('twelve.wav'));
  const loop = toFrames(concat(clip, tone(RATE * 6 - clip.length)));
  const idle = toFrames(tone(RATE));
  // Only the measured server's sessions talk during its block: the servers never compete.
  const talk = (group: VoiceClient[], on: boolean): void => {
    for (const c of group) {
      if (on) c.mic.start(Math.random() * 20);
      else c.mic.stop();
    }
  };
  try {
    for (const [i, server] of servers.entries()) {
      await waitForQuiet(() => server.cpuMs());
      const group: VoiceClient[] = [];
      for (let n = 0; n < VOICE_SESSIONS; n += 1) {
        const start = { session_id: `bench-obs-voice-${VARIANTS[i]}-${n}`, api_key: server.apiKey, mode: { kind: 'service', greeting: false }, audio: { sr: RATE, output_encoding: 'pcm16', output_sr: RATE } };
        const c = await VoiceClient.open(server.wsUrl, start, { idle, lean: true });
        c.mic.setLoop(loop, Math.floor(Math.random() * loop.length));
        group.push(c);
      }
      clients.push(group);
    }
    for (let block = 0; block < VOICE_BLOCKS; block += 1) {
      for (const v of rotate(VARIANTS, block)) {
        const i = VARIANTS.indexOf(v);
        talk(clients[i]!, true);
        await sleep(VOICE_SETTLE_MS); // back into the talk-and-listen cycle
        await charge(servers[i]!, costs.get(v)!, async () => {
          const t0 = performance.now();
          await sleep(VOICE_WINDOW_MS);
          return (VOICE_SESSIONS * (performance.now() - t0)) / 1000;
        });
        talk(clients[i]!, false);
      }
    }
  } finally {
    await Promise.all(clients.flat().map((c) => c.close()));
    await Promise.all(servers.map((s) => s.stop()));
  }
  return costs;
}

/** The variants in a different order each block, so none is always measured first. */
function rotate<T>(items: readonly T[], by: number): T[] {
  return items.map((_, i) => items[(i + by) % items.length]!);
}

function rows(path: 'text' | 'voice', unit: string, figure: 'mainPerUnit' | 'processPerUnit', costs: Map<Variant, Cost>): Row[] {
  const where = figure === 'mainPerUnit' ? 'main thread' : 'whole process';
  const out: Row[] = [];
  for (const v of VARIANTS) {
    const c = costs.get(v)!;
    const values = c[figure];
    out.push({
      benchmark: name,
      metric: `${path}: server CPU, ${v}`,
      value: round(median(values), 4),
      unit,
      note: `${where}, median of ${values.length} blocks (${round(Math.min(...values), 4)}–${round(Math.max(...values), 4)}); ${round(c.units)} ${path === 'text' ? 'turns' : 'session-seconds'} in all`,
    });
  }
  const cost = (v: Variant, base: Variant): { pct: number; range: string } => {
    const ratios = costs.get(v)![figure].map((x, i) => x / costs.get(base)![figure][i]! - 1);
    const sorted = [...ratios].sort((a, b) => a - b);
    return { pct: round(median(ratios) * 100, 1), range: `${round(sorted[Math.floor(sorted.length / 4)]! * 100, 1)} to ${round(sorted[Math.floor((sorted.length * 3) / 4)]! * 100, 1)} %` };
  };
  const line = (metric: string, v: Variant, base: Variant, note: string): void => {
    const c = cost(v, base);
    out.push({ benchmark: name, metric: `${path}: ${metric}`, value: c.pct, unit: '%', note: `${note}; median of per-block ratios (interquartile ${c.range}); ${where}` });
  };
  line('CPU cost of metrics (tracing off, no turn log line) vs none', 'metrics', 'off', 'goal < 3 %; holds the dormant tracing hooks too (goal < 2 % when off)');
  line('CPU cost of the per-turn log line (LOG_LEVEL=info)', 'log', 'metrics', 'on top of metrics; stdout a pipe read by this process');
  line('CPU cost of tracing on (spans exported)', 'tracing', 'metrics', 'on top of metrics; an OTLP/HTTP collector in this process');
  return out;
}

function sinkRow(spans: number): Row {
  return { benchmark: name, metric: 'spans received by the collector (tracing server)', value: spans, unit: 'spans', note: 'proof the tracing variant exported; the off and metrics servers export none' };
}

/** An OTLP/HTTP collector that counts spans and keeps nothing. */
async function startSink(): Promise<{ url: string; spans(): number; close(): Promise<void> }> {
  let spans = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      spans += (Buffer.concat(chunks).toString('utf8').match(/"spanId"/g) ?? []).length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** CPU µs per call of `fn` over `n` calls (after a warm-up), the best of three runs. */
async function cpuPerCall(n: number, fn: () => unknown): Promise<number> {
  for (let i = 0; i < n / 5; i += 1) await fn();
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3; run += 1) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i += 1) await fn();
    const t = process.cpuUsage(t0);
    best = Math.min(best, (t.user + t.system) / n);
  }
  return best;
}

async function microCosts(): Promise<Row[]> {
  progress('observability: timing the per-turn work in process');
  const { parleyMetrics } = await import('../signaling/observability/metrics.ts');
  const { SessionTelemetry } = await import('../signaling/observability/session-telemetry.ts');
  const { observeLanguageModel } = await import('../signaling/observability/provider-telemetry.ts');
  const { Tracing } = await import('../signaling/observability/tracing.ts');
  const { Readiness } = await import('../signaling/observability/readiness.ts');
  const { LocalLanguageModel } = await import('../session/providers/local-llm.ts');
  const { pino } = await import('pino');
  const observability = { active: true, metrics: parleyMetrics(), tracing: new Tracing({ endpoint: undefined, headers: {}, serviceName: 'bench' }), readiness: new Readiness(1000) };
  const quiet = pino({ level: 'warn' });
  const telemetry = new SessionTelemetry(observability, quiet, { sessionId: 's', account: 'a', transport: 'websocket', modality: 'text', resumed: false });
  const reply = { turnId: 't_1', status: 'completed' as const, modality: 'text' as const, metrics: { llm_first_token: 0.31, text_first_delta: 0.42 } };
  const turnUs = await cpuPerCall(50_000, () => {
    const scope = telemetry.openTurn();
    scope.run(() => 0);
    scope.end(reply);
  });
  const llm = new LocalLanguageModel(0);
  const observed = observeLanguageModel(observability, llm);
  const drain = async (model: { stream: typeof llm.stream }): Promise<void> => {
    for await (const event of model.stream({ messages: [{ role: 'user', content: 'hello' }], tools: [], toolChoice: 'auto', signal: new AbortController().signal })) void event;
  };
  const bareUs = await cpuPerCall(20_000, () => drain(llm));
  const observedUs = await cpuPerCall(20_000, () => drain(observed));
  // The log line as the server writes it (no redaction, buffered), into /dev/null.
  const logger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 })).child({ session_id: 's', account: 'a' });
  const lineUs = await cpuPerCall(50_000, () => logger.info({ turn_id: 't_1', status: 'completed', modality: 'text', stages: reply.metrics }, 'turn'));
  const row = (metric: string, value: number, note: string): Row => ({ benchmark: name, metric, value: round(value, 2), unit: 'µs CPU', note });
  return [
    row('per turn: telemetry (turn scope, counters, stage histograms; tracing off)', turnUs, 'in process, best of 3 runs of 50 000; with the model wrapper below, what metrics add to each turn'),
    row('per model stream: the measuring wrapper', observedUs - bareUs, `in process: the local model's 3-event stream ${round(bareUs, 2)} µs bare, ${round(observedUs, 2)} µs wrapped`),
    row('per turn: the log line (LOG_LEVEL=info)', lineUs, 'in process, pino serialisation into its buffer (written asynchronously)'),
  ];
}


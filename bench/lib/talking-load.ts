import { setTimeout as sleep } from 'node:timers/promises';
import { ChildServer } from './child-server.ts';
import { LoadMeter, waitForQuiet } from './load-meter.ts';
import { percentile, progress, round } from './stats.ts';
import { utterance, type Utterance } from './utterance.ts';
import { VoiceClient } from './voice-client.ts';

/**
 * Talking sessions per core, counted rather than estimated: one server with the local providers
 * (pocketsphinx + flite + local model) confined to one CPU (taskset, so its recognisers, Silero
 * thread and flite helpers share that core as they would in a one-CPU container), and K sessions
 * talking at once, each utterance after utterance with its reply played out in real time between
 * them. A step holds when every transcript is exact and end of speech → first audio stays within
 * HOLD_P50 / HOLD_P90 of the one-session step measured in the same run: the core serves K
 * sessions without making any of them wait. The estimate it replaces divided one core by one
 * session's CPU, which counts every wake-up of an otherwise idle process as that session's cost.
 */
export interface TalkingStep {
  sessions: number;
  samples: Utterance[];
  /** The server's process tree, cores (≤ 1: it has one). */
  cores: number;
  cpuPerUtteranceMs: number;
  /** Everything else on the machine meanwhile, cores. */
  foreignCores: number;
  /** The bench's own CPU, cores. */
  clientCores: number;
  exact: number;
  /** Utterances that got no transcript or no reply in time (the session then stopped talking). */
  failed: number;
  firstFailure?: string;
  holds: boolean;
}

const HOLD_P50 = 1.25;
/** One utterance's cycle with twelve.wav and its reply, measured with one session (≈ 4.4 s). */
const CYCLE_MS = 4400;
const HOLD_P90 = 1.5;

export interface TalkingLoadOptions {
  steps: number[];
  windowMs: number;
  speech: readonly Buffer[];
  expected: string;
  idle: readonly Buffer[];
  start: (server: ChildServer) => Record<string, unknown>;
  env: Record<string, string>;
}

export async function talkingLoad(options: TalkingLoadOptions): Promise<TalkingStep[]> {
  const most = Math.max(...options.steps);
  // Enough warm recognisers for every session to be mid-utterance at once: an operator sizes
  // ASR_WARM_PROCESSES to the sessions a process takes, or the first busy moment loads a model.
  const server = await ChildServer.start({ cpu: 0, env: { ASR_WARM_PROCESSES: String(most), ...options.env }, startTimeoutMs: 120_000 });
  const steps: TalkingStep[] = [];
  try {
    await waitForQuiet(() => server.treeCpuMs());
    for (const sessions of options.steps) {
      progress(`voice: talking load: ${sessions} session${sessions === 1 ? '' : 's'} on one core for ${options.windowMs / 1000} s`);
      steps.push(await step(server, sessions, options, steps[0]));
      const last = steps.at(-1)!;
      if (last.failed > 0) {
        progress(`voice: talking load: ${sessions}: ${last.failed} utterance(s) failed: ${last.firstFailure}`);
      }
      const p50 = (f: (u: Utterance) => number) => round(percentile(last.samples.map(f), 50), 1);
      progress(`voice: talking load: ${sessions}: p50 ${p50((u) => u.eosToAudio)} ms (to asr ${p50((u) => u.eosToAsr)}, asr → audio ${p50((u) => u.asrToAudio)}), ${round(last.cores, 2)} cores, ${last.exact}/${last.samples.length} exact, ${last.holds ? 'holds' : 'does not hold'}`);
      // Past twice the one-session latency (or a failed utterance) the core is overrun: larger
      // steps would only take longer to say so.
      const reference = steps[0]!.samples.map((u) => u.eosToAudio);
      if (last.failed > 0 || percentile(last.samples.map((u) => u.eosToAudio), 50) > 2 * percentile(reference, 50)) break;
    }
    return steps;
  } finally {
    await server.stop();
  }
}

async function step(server: ChildServer, sessions: number, options: TalkingLoadOptions, single: TalkingStep | undefined): Promise<TalkingStep> {
  const clients: VoiceClient[] = [];
  try {
    for (let i = 0; i < sessions; i += 1) clients.push(await VoiceClient.open(server.wsUrl, options.start(server), { idle: options.idle, timeoutMs: 30_000 }));
    const failures: string[] = [];
    const failed = (error: unknown) => failures.push(error instanceof Error ? error.message : String(error));
    // Sessions start talking at phases spread over one utterance's cycle (speech, end of turn,
    // the reply played out), as independent users would: started together they would speak in
    // step, all at once. Each one's first utterance warms its path; what is measured starts
    // once every session has warmed up and runs for the window.
    const measureFrom = performance.now() + 2 * CYCLE_MS;
    const until = measureFrom + options.windowMs;
    const meter = new LoadMeter(() => server.treeCpuMs());
    const measured = (async () => {
      await sleep(measureFrom - performance.now());
      const cpu0 = server.treeCpuMs();
      meter.begin();
      await sleep(until - performance.now());
      meter.end();
      return server.treeCpuMs() - cpu0;
    })();
    const samples = (
      await Promise.all(
        clients.map(async (client, i) => {
          const out: Utterance[] = [];
          client.mic.start(Math.random() * 20);
          await sleep((i * CYCLE_MS) / sessions);
          // A session whose utterance failed stops talking: the step already does not hold.
          while (failures.length === 0 && performance.now() < until) {
            const started = performance.now();
            const sample = await utterance(client, options.speech, undefined).catch(failed);
            if (typeof sample === 'object' && started >= measureFrom) out.push(sample);
            await sleep(200 + Math.random() * 400);
          }
          return out;
        }),
      )
    ).flat();
    const cpu = await measured;
    const wall = options.windowMs;
    const exact = samples.filter((s) => s.transcript === options.expected).length;
    const eos = samples.map((s) => s.eosToAudio);
    const holds =
      failures.length === 0 &&
      exact === samples.length &&
      (single === undefined ||
        (percentile(eos, 50) <= HOLD_P50 * percentile(single.samples.map((s) => s.eosToAudio), 50) &&
          percentile(eos, 90) <= HOLD_P90 * percentile(single.samples.map((s) => s.eosToAudio), 90)));
    return { sessions, samples, cores: cpu / wall, cpuPerUtteranceMs: cpu / samples.length, foreignCores: meter.foreignCores, clientCores: meter.clientCores, exact, failed: failures.length, ...(failures[0] ? { firstFailure: failures[0] } : {}), holds };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/** The largest step that holds with every smaller step holding too. */
export function sessionsPerCore(steps: TalkingStep[]): number {
  let best = 0;
  for (const s of steps) {
    if (!s.holds) break;
    best = s.sessions;
  }
  return best;
}

export const HOLD_RULE = `every transcript exact and end of speech → first audio p50 ≤ ${HOLD_P50}× and p90 ≤ ${HOLD_P90}× the one-session step's`;

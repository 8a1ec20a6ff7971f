import { startFakeOpenAiSpeechServer, toneReply } from '../../../session/testing/fake-openai-speech-server.ts';
import { FuzzServer } from './fuzz-server.ts';
import { Canary } from './canary.ts';
import { CLIENT_FRAME_TYPES, type ClientFrameType } from './frames.ts';
import { FuzzClient, type FuzzTally } from './fuzz-client.ts';
import { MUTATIONS } from './mutations.ts';
import { fuzzRequests } from './request-fuzz.ts';
import { Rng } from '../../../session/testing/rng.ts';

export interface FrameFuzzOptions {
  seed: number;
  /** Fuzzing clients in text and in voice sessions, each with its own session id. */
  textClients: number;
  voiceClients: number;
  framesPerClient: number;
  /** Odd upgrade and HTTP requests (bad targets, headers, versions) sent meanwhile. */
  requests: number;
  /** How long an open turn may take to close once its client stops sending. */
  settleMs?: number;
  /** Longest a canary's turn may take. */
  canaryTurnMs?: number;
}

export interface FrameFuzzReport {
  seed: number;
  framesSent: number;
  requestsSent: number;
  /** Shots by mutation (`<frame type>:<mutation>`, `audio`, `start:…`). */
  byKind: Map<string, number>;
  /** The server process died (or stopped answering /healthz) during the run. */
  crashes: number;
  crashDetail: string;
  hungTurns: number;
  /** internal_error frames: a bug caught before it took the process down (target 0). */
  internalErrors: number;
  /** What the server wrote to stderr besides Node's deprecation notices (its log is stdout). */
  stderr: string;
  /** Canary sessions beside the fuzzed ones that saw an error, a close, a late or wrong reply. */
  sessionsHarmed: number;
  harmDetail: string[];
  canaryTurns: number;
  fuzzedSessions: number;
  fuzzedAliveAtEnd: number;
  sockets: number;
  resumes: number;
  errorCodes: Map<string, number>;
  closeCodes: Map<number, number>;
  /** The drain at the end: SIGTERM → exit code. */
  drainExit: number | null;
  ms: number;
}

/**
 * The frame fuzzer, against the real server in a process of its own (a crash is that process
 * dying): clients send mutated frames of every type (schema breaks, other types' shapes, deep and
 * huge JSON, truncated and invalid UTF-8 text, binary where text belongs, oversize frames) mixed
 * with valid ones, in text and voice sessions, and odd upgrade requests arrive meanwhile, while
 * canary sessions beside them hold ordinary conversations. Speech runs on the fake OpenAI-compatible speech server (cheap and
 * deterministic); the model is the local one.
 */
export async function runFrameFuzz(options: FrameFuzzOptions): Promise<FrameFuzzReport> {
  const started = Date.now();
  const settleMs = options.settleMs ?? 8000;
  const rng = new Rng(options.seed);
  const speech = await startFakeOpenAiSpeechServer();
  speech.scriptTranscription(() => 'what is 12 times 7');
  speech.scriptSpeech((request) => toneReply(request.input.slice(0, 40)));
  const server = await FuzzServer.start({
    ASR_PROVIDER: 'openai', ASR_BASE_URL: speech.url, TTS_PROVIDER: 'openai', TTS_BASE_URL: speech.url,
    TOOL_TIMEOUT_MS: '1500', PERMISSION_TIMEOUT_S: '1', DEFERRED_TIMEOUT_S: '2', END_CALL_GRACE_MS: '300',
    INTERACTION_QUEUE_DEADLINE_S: '0.3', RESUME_TTL_S: '30', START_TIMEOUT_MS: '3000',
    // Every client here is 127.0.0.1: the per-address limit has tests of its own.
    AUTH_FAILURES_PER_ADDRESS: '1000000',
  });
  let crashDetail = '';
  const canaries = [
    new Canary(server.wsUrl, server.key, 'text', 'canary-text-1', options.canaryTurnMs ?? 15_000),
    new Canary(server.wsUrl, server.key, 'text', 'canary-text-2', options.canaryTurnMs ?? 15_000),
    new Canary(server.wsUrl, server.key, 'voice', 'canary-voice-1', options.canaryTurnMs ?? 15_000),
  ];
  try {
    await Promise.all(canaries.map((c) => c.open()));
    const canaryRuns = canaries.map((c) => c.run());
    const clients = [
      ...Array.from({ length: options.textClients }, (_, i) => new FuzzClient(server.wsUrl, server.key, rng.fork(), 'text', `fuzz-text-${i}`)),
      ...Array.from({ length: options.voiceClients }, (_, i) => new FuzzClient(server.wsUrl, server.key, rng.fork(), 'voice', `fuzz-voice-${i}`)),
    ];
    // The sweep: every frame type through every mutation, shared out among the clients.
    const sweep = CLIENT_FRAME_TYPES.flatMap((type) => MUTATIONS.map((m): [ClientFrameType, string] => [type, m]));
    const [tallies, requestsSent] = await Promise.all([
      Promise.all(clients.map((c, i) => c.run(options.framesPerClient, settleMs, sweep.filter((_, n) => n % clients.length === i)))),
      fuzzRequests(server.port, rng.fork(), options.requests),
    ]);
    const harm = await Promise.all(canaries.map((c) => c.stop()));
    await Promise.all(canaryRuns);
    if (server.exit) crashDetail = `the server exited (${server.exit.code ?? server.exit.signal}): ${server.stderrTail()}`;
    else if ((await fetch(`${server.url}/healthz`).then((r) => r.status, () => 0)) !== 200) crashDetail = 'the server stopped answering /healthz';
    const crashed = crashDetail !== '';
    const stderr = server.stderrTail().split('\n').filter((line) => line.trim() && !/DeprecationWarning|--trace-deprecation/.test(line)).join('\n');
    await server.stop();
    return {
      seed: options.seed,
      ...merge(tallies),
      requestsSent,
      crashes: crashed ? 1 : 0,
      stderr,
      internalErrors: tallies.reduce((n, t) => n + (t.errors.get('internal_error') ?? 0), 0),
      crashDetail,
      sessionsHarmed: harm.filter((h) => h.harm.length > 0).length,
      harmDetail: harm.flatMap((h, i) => h.harm.map((line) => `canary ${i}: ${line}`)),
      canaryTurns: harm.reduce((n, h) => n + h.turns, 0),
      fuzzedSessions: clients.length,
      drainExit: crashed ? null : (server.exit?.code ?? null),
      ms: Date.now() - started,
    };
  } finally {
    await Promise.all(canaries.map((c) => c.stop()));
    await server.stop();
    await speech.close();
  }
}

function merge(tallies: FuzzTally[]): Pick<FrameFuzzReport, 'framesSent' | 'byKind' | 'hungTurns' | 'fuzzedAliveAtEnd' | 'sockets' | 'resumes' | 'errorCodes' | 'closeCodes'> {
  const byKind = new Map<string, number>();
  const errorCodes = new Map<string, number>();
  const closeCodes = new Map<number, number>();
  const add = <K>(into: Map<K, number>, from: Map<K, number>): void => {
    for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
  };
  for (const t of tallies) {
    add(byKind, t.byKind);
    add(errorCodes, t.errors);
    add(closeCodes, t.closes);
  }
  return {
    framesSent: tallies.reduce((n, t) => n + t.framesSent, 0),
    byKind,
    hungTurns: tallies.reduce((n, t) => n + t.hungTurns.length, 0),
    fuzzedAliveAtEnd: tallies.filter((t) => t.aliveAtEnd).length,
    sockets: tallies.reduce((n, t) => n + t.sockets, 0),
    resumes: tallies.reduce((n, t) => n + t.resumes, 0),
    errorCodes,
    closeCodes,
  };
}

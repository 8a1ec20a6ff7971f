import { readdirSync, readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { FuzzServer } from './fuzz-server.ts';
import type { Rng } from '../../../session/testing/rng.ts';

/** How the server was started and who gets the signal, as a supervisor would do it. */
export type SignalTarget =
  /** `node --import tsx signaling/main.ts`, signalled directly (a supervisor running node itself). */
  | 'server'
  /** The documented start command (`npm start`), its first process signalled (docker stop, systemd's main PID). */
  | 'start-command'
  /** The documented start command, its whole process group signalled (Ctrl-C in a terminal, systemd's control group). */
  | 'start-command-group';

export interface SignalScenario {
  target: SignalTarget;
  signal: 'SIGTERM' | 'SIGINT';
  /** A second signal this long after the first (an impatient supervisor), or none. */
  againAfterMs?: number;
  /** Wait after the sessions are busy before signalling. */
  delayMs: number;
}

export interface SignalResult {
  scenario: SignalScenario;
  signalsSent: number;
  sessions: number;
  /** Sessions told server_restarting and closed 1012 (the drain), of `sessions`. */
  drained: number;
  exitMs: number | undefined;
  exitCode: number | null | undefined;
  /** Still answering on its port, or processes of its group still alive, after the bound. */
  leftRunning: boolean;
  problems: string[];
}

const DRAIN_TIMEOUT_MS = 2000;
/** main.ts exits at most 2 s after the drain bound. */
const EXIT_BOUND_MS = DRAIN_TIMEOUT_MS + 2000 + 1500;

/** A random scenario: target, signal, a second signal now and then, a random moment. */
export function randomScenario(rng: Rng, targets: readonly SignalTarget[]): SignalScenario {
  return {
    target: rng.pick(targets),
    signal: rng.pick(['SIGTERM', 'SIGINT'] as const),
    ...(rng.chance(0.3) ? { againAfterMs: rng.int(300) } : {}),
    delayMs: rng.int(400),
  };
}

/**
 * Starts the server as `scenario.target` says, opens busy sessions (turns streaming, a tool call
 * open), signals at the scenario's moment, and checks the drain: every session hears
 * server_restarting and close 1012, the process exits 0 within its bound, and nothing of it is
 * left running or listening.
 */
export async function runSignalScenario(scenario: SignalScenario): Promise<SignalResult> {
  // LOG_LEVEL info: the server's "stopped" line says its drain ran to the end.
  const env = { DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS), LOCAL_LLM_WORD_DELAY_MS: '30', LOG_LEVEL: 'info' };
  const viaStartCommand = scenario.target !== 'server';
  const server = await FuzzServer.start(env, viaStartCommand ? ['npm', 'start', '--silent'] : undefined);
  const result: SignalResult = { scenario, signalsSent: 0, sessions: 0, drained: 0, exitMs: undefined, exitCode: undefined, leftRunning: false, problems: [] };
  const pid = server.pid;
  const group = viaStartCommand ? processGroup(pid) : [pid];
  const sessions = await Promise.all([0, 1, 2].map((i) => busySession(server, `sig-${i}`, i === 2)));
  result.sessions = sessions.length;
  try {
    await new Promise((r) => setTimeout(r, scenario.delayMs));
    const send = (): void => {
      result.signalsSent += 1;
      if (scenario.target === 'start-command-group') process.kill(-pid, scenario.signal);
      else process.kill(pid, scenario.signal);
    };
    const signalledAt = Date.now();
    send();
    if (scenario.againAfterMs !== undefined) setTimeout(() => !server.exit && send(), scenario.againAfterMs);
    await Promise.race([server.exited, new Promise((r) => setTimeout(r, EXIT_BOUND_MS))]);
    // With the start command, the server is the last of its group to go.
    const deadline = signalledAt + EXIT_BOUND_MS;
    while (group.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (server.exit) {
      result.exitMs = Date.now() - signalledAt;
      result.exitCode = server.exit.code;
      // A wrapper may die of the signal it passed on (the shell convention); the server may not.
      const wrapperBySignal = viaStartCommand && server.exit.signal === scenario.signal;
      if (server.exit.code !== 0 && !wrapperBySignal) result.problems.push(`exited with ${server.exit.code ?? server.exit.signal}`);
    } else result.problems.push(`still running ${EXIT_BOUND_MS} ms after the signal`);
    if (!/"msg":"stopped"/.test(server.stdoutTail())) result.problems.push('the drain did not run to its end (no "stopped" log line)');
    // By now every session should have been closed by the drain; one still open was not.
    const stillOpen = { code: 0, heardRestarting: false };
    const closes = await Promise.all(sessions.map((s) => Promise.race([s.closed, new Promise<typeof stillOpen>((r) => setTimeout(() => r(stillOpen), 200))])));
    result.drained = closes.filter((c) => c.code === 1012 && c.heardRestarting).length;
    if (result.drained < sessions.length) result.problems.push(`drained ${result.drained}/${sessions.length}: ${JSON.stringify(closes)}`);
    const listening = await fetch(`${server.url}/healthz`).then(() => true, () => false);
    const survivors = group.filter(alive);
    result.leftRunning = listening || survivors.length > 0;
    if (result.leftRunning) result.problems.push(`left running: ${listening ? 'port still answering; ' : ''}${survivors.length} process(es) of the group alive`);
    if (/Uncaught|TypeError|RangeError/.test(server.stderrTail())) result.problems.push(`stderr: ${server.stderrTail(600)}`);
    return result;
  } finally {
    for (const p of group) if (alive(p)) process.kill(p, 'SIGKILL');
    for (const s of sessions) s.ws.terminate();
    await server.stop(100);
  }
}

/** A session with a reply streaming (and, for one, a client tool call left open). */
async function busySession(server: FuzzServer, sessionId: string, withTool: boolean): Promise<{ ws: WebSocket; closed: Promise<{ code: number; heardRestarting: boolean }> }> {
  const ws = new WebSocket(server.wsUrl, { perMessageDeflate: false });
  let heardRestarting = false;
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    const frame = JSON.parse(String(data)) as { type: string; code?: string };
    if (frame.type === 'ready') ready();
    if (frame.type === 'error' && frame.code === 'server_restarting') heardRestarting = true;
  });
  ws.on('error', () => undefined);
  const closed = new Promise<{ code: number; heardRestarting: boolean }>((resolve) => ws.once('close', (code) => resolve({ code, heardRestarting })));
  await new Promise<void>((ok, fail) => {
    ws.once('open', () => ok());
    ws.once('error', fail);
  });
  const tools = [{ name: 'lookup', parameters: { type: 'object', properties: {} } }];
  ws.send(JSON.stringify({ type: 'start', session_id: sessionId, api_key: server.key, mode: { kind: 'service', modality: 'text', greeting: false, tools } }));
  await isReady;
  ws.send(JSON.stringify({ type: 'input_text', text: withTool ? 'call lookup' : `say ${'word '.repeat(60)}` }));
  return { ws, closed };
}

/** The process and its descendants (the start command's wrappers and the server). */
function processGroup(pid: number): number[] {
  const out = [pid];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      for (const child of children) out.push(...processGroup(child));
    }
  } catch {
    // gone already
  }
  return out;
}

/** Running (a zombie waiting to be reaped has exited: it holds nothing). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

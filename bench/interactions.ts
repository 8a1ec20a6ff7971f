import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { ChildServer } from './lib/child-server.ts';
import { percentile, progress, round } from './lib/stats.ts';
import type { Row } from './types.ts';

/**
 * Interactions (issue 7): how fast a tool's question reaches the floor.
 *
 * - free floor: tool_partial_result with an interaction sent on an idle session (the ask sits
 *   on a deferred job) → its tool_job_narration `started` received;
 * - busy floor: the ask is raised while a reply streams (it is answered `queued`); timed from
 *   receipt of that reply's `done` (the floor frees) → `started` received.
 *
 * The server runs in a child process (signaling/main.ts) with the offline model at
 * LOCAL_LLM_WORD_DELAY_MS=15 (so the busy reply lasts a few hundred ms), LOG_LEVEL=silent.
 * One text session; per sample a fresh deferred job (the model calls the deferrable `ask_job`
 * tool because the user names it; the client defers it), so every ask is on its own call and
 * each ends with the job's tool_result. Times are client-observed on loopback with
 * performance.now() (an upper bound of the server-added latency).
 */

export const name = 'interactions';

const SAMPLES = 50;
const WARMUP = 5;
const WORD_DELAY_MS = 15;
const BUSY_TEXT = 'say the quick brown fox jumps over the lazy dog while the band plays on and on until the end';

type Frame = { type: string; [key: string]: unknown };

/** A JSON text-session client with predicate waits on received frames. */
class Client {
  readonly frames: Array<{ frame: Frame; at: number }> = [];
  private wake: Array<() => void> = [];

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      this.frames.push({ frame: JSON.parse(String(data)) as Frame, at: performance.now() });
      for (const w of this.wake.splice(0)) w();
    });
    ws.on('close', () => {
      for (const w of this.wake.splice(0)) w();
    });
  }

  static async open(url: string, apiKey: string): Promise<Client> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    const client = new Client(ws);
    client.send({
      type: 'start', session_id: `bench-interactions-${Date.now()}`, api_key: apiKey,
      mode: { kind: 'service', modality: 'text', greeting: false, tools: [{ name: 'ask_job', description: 'A job that asks the user', deferrable: true }] },
    });
    await client.wait((f) => f.type === 'ready');
    return client;
  }

  send(frame: Frame): number {
    const at = performance.now();
    this.ws.send(JSON.stringify(frame));
    return at;
  }

  /** The first frame from index `from` on matching `match`, with its receipt time. */
  async wait(match: (f: Frame) => boolean, from = 0, timeoutMs = 15000): Promise<{ frame: Frame; at: number; index: number }> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex((e, i) => i >= from && match(e.frame));
      if (index >= 0) return { ...this.frames[index]!, index };
      if (this.ws.readyState !== WebSocket.OPEN) throw new Error(`socket closed while waiting; last frames: ${this.tail()}`);
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`timed out; last frames: ${this.tail()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.ws.close(1000);
  }

  private tail(): string {
    return this.frames.slice(-8).map((e) => e.frame.type).join(',');
  }
}

const isDone = (turnId: unknown) => (f: Frame): boolean => f.type === 'done' && f.turn_id === turnId;
const narration = (state: string, id: string) => (f: Frame): boolean =>
  f.type === 'tool_job_narration' && f.state === state && (f.interaction_ids as string[]).includes(id);

/** A deferred ask_job call, its turn done: returns the call id. */
async function deferredJob(client: Client, n: number): Promise<string> {
  const from = client.frames.length;
  client.send({ type: 'input_text', text: `please run ask_job number ${n}` });
  const call = await client.wait((f) => f.type === 'tool_call' && f.name === 'ask_job', from);
  const asr = await client.wait((f) => f.type === 'asr' && f.turn_id !== undefined, from);
  client.send({ type: 'tool_deferred', id: call.frame.id as string, handle: `h-${n}` });
  await client.wait(isDone(asr.frame.turn_id), from);
  return call.frame.id as string;
}

/** Ends the job: its ask resolves, then its completion voiceover plays out. */
async function endJob(client: Client, callId: string, interactionId: string): Promise<void> {
  const from = client.frames.length;
  client.send({ type: 'tool_result', id: callId, content: 'done', outcome: 'succeeded', verified: true });
  await client.wait(narration('resolved', interactionId), from);
  const turn = await client.wait((f) => f.type === 'turn', from);
  await client.wait(isDone(turn.frame.turn_id), turn.index);
}

function raise(client: Client, callId: string, id: string): number {
  return client.send({ type: 'tool_partial_result', id: callId, content: {}, interaction: { id, prompt: 'Small or large?', options: ['small', 'large'] } });
}

async function freeFloor(client: Client, n: number): Promise<number> {
  const callId = await deferredJob(client, n);
  const id = `free-${n}`;
  const from = client.frames.length;
  const sentAt = raise(client, callId, id);
  const started = await client.wait(narration('started', id), from);
  const turn = await client.wait((f) => f.type === 'turn', started.index);
  await client.wait(isDone(turn.frame.turn_id), turn.index);
  await endJob(client, callId, id);
  return started.at - sentAt;
}

async function busyFloor(client: Client, n: number): Promise<number> {
  const callId = await deferredJob(client, n);
  const id = `busy-${n}`;
  const from = client.frames.length;
  client.send({ type: 'input_text', text: BUSY_TEXT });
  const asr = await client.wait((f) => f.type === 'asr' && f.turn_id !== undefined, from);
  await client.wait((f) => f.type === 'text_delta' && f.turn_id === asr.frame.turn_id, from);
  raise(client, callId, id);
  const queued = await client.wait((f) => narration('queued', id)(f) || narration('started', id)(f), from);
  if (queued.frame.state !== 'queued') throw new Error('the ask was not queued: the busy reply ended too soon');
  const freed = await client.wait(isDone(asr.frame.turn_id), from);
  const started = await client.wait(narration('started', id), from);
  const turn = await client.wait((f) => f.type === 'turn', started.index);
  await client.wait(isDone(turn.frame.turn_id), turn.index);
  await endJob(client, callId, id);
  return started.at - freed.at;
}

export async function run(): Promise<Row[]> {
  progress('interactions: starting server child');
  const server = await ChildServer.start({ env: { LOCAL_LLM_WORD_DELAY_MS: String(WORD_DELAY_MS) } });
  const free: number[] = [];
  const busy: number[] = [];
  try {
    const client = await Client.open(server.wsUrl, server.apiKey);
    try {
      let n = 0;
      for (let i = 0; i < WARMUP; i += 1) {
        await freeFloor(client, (n += 1));
        await busyFloor(client, (n += 1));
      }
      progress(`interactions: ${SAMPLES} samples per floor state`);
      for (let i = 0; i < SAMPLES; i += 1) {
        free.push(await freeFloor(client, (n += 1)));
        busy.push(await busyFloor(client, (n += 1)));
      }
    } finally {
      client.close();
    }
  } finally {
    await server.stop();
  }
  const note = `${SAMPLES} samples, 1 text session, local model at ${WORD_DELAY_MS} ms/word; client-observed on loopback`;
  const row = (metric: string, samples: number[], p: number, extra: string): Row => ({
    benchmark: name, metric: `${metric} p${p}`, value: round(percentile(samples, p), 2), unit: 'ms', note: `${extra}; ${note}`,
  });
  return [
    row('free floor: raise → started', free, 50, 'tool_partial_result sent → tool_job_narration started received'),
    row('free floor: raise → started', free, 95, 'includes one loopback round trip'),
    row('busy floor: floor frees → started', busy, 50, "the busy reply's done received → started received (the ask was queued)"),
    row('busy floor: floor frees → started', busy, 95, 'no round trip: both frames are sent by the server back to back'),
  ];
}

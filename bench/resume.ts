import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { serialize, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import WebSocket from 'ws';
import { MemoryResumeStash, type ResumeStash, type StashOwner } from '../session/resume/resume-stash.ts';
import { createStores } from '../signaling/stores/stores.ts';
import type { StashEntry } from '../session/resume/snapshot.ts';
import { loadConfig } from '../signaling/config.ts';
import { startServer, type RunningServer } from '../signaling/server.ts';
import { withTimeout } from './lib/bench-client.ts';
import { percentile, progress, round } from './lib/stats.ts';
import type { Row } from './types.ts';

/**
 * Resume (issue 5): what a dropped 50-turn text conversation costs to stash, to keep stashed and
 * to restore. The server runs in this process (signaling/server.ts startServer, local model at
 * 0 ms/word, voice providers off) with a recording wrapper around the default in-memory stash
 * (the stores override), so the moment the stash receives a conversation is visible on the
 * bench's clock and every stashed entry can be sized:
 *
 * - drop → stash put: ws.terminate() here → the server's save() call (loopback close detection,
 *   teardown, snapshot);
 * - restore: start frame with resume_token sent → ready received, against a fresh start (no
 *   token) on the same server; the difference is what restoring 50 turns adds;
 * - memory: JS heap (after forced GCs: V8's gc exposed at run time) and RSS delta for K stashed
 *   50-turn conversations, per conversation; and the snapshot's JSON and v8.serialize sizes (what
 *   a shared stash such as Redis would hold).
 */

export const name = 'resume';

const TURNS = 50;
const RTT_SAMPLES = 100;
const STASHED = 200;
const BUILD_PARALLEL = 20;

/** A realistic typed message (~90 characters); the local model answers with ~130. */
const message = (i: number): string => `Turn ${i}: could you remind me what we said about the delivery window and the invoice address?`;

class RecordingStash implements ResumeStash {
  readonly shared = false;
  private readonly inner = new MemoryResumeStash(600_000);
  readonly putAt = new Map<string, number>();
  readonly sizes: Array<{ json: number; v8: number; messages: number }> = [];
  measureSizes = false;

  get size(): number {
    return this.inner.size;
  }

  async save(token: string, entry: StashEntry): Promise<'saved' | 'taken'> {
    this.putAt.set(token, performance.now());
    if (this.measureSizes) {
      this.sizes.push({ json: Buffer.byteLength(JSON.stringify(entry)), v8: serialize(entry).length, messages: entry.snapshot.history.length });
    }
    return this.inner.save(token, entry);
  }

  take(token: string, owner: StashOwner): ReturnType<ResumeStash['take']> {
    return this.inner.take(token, owner);
  }

  giveBack(token: string, entry: StashEntry): Promise<void> {
    return this.inner.giveBack(token, entry);
  }

  discard(token: string): Promise<void> {
    return this.inner.discard(token);
  }

  keepAlive(tokens: string[]): Promise<void> {
    return this.inner.keepAlive(tokens);
  }
}

/** A text session on a raw socket: start (fresh or resuming) → ready, turns, abrupt drop. */
class TextClient {
  private frames: Array<{ type: string; body: Record<string, unknown> }> = [];
  private wake: (() => void) | undefined;
  token = '';

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const body = JSON.parse(String(data)) as Record<string, unknown>;
      this.frames.push({ type: String(body.type), body });
      this.wake?.();
    });
    ws.on('error', () => undefined);
  }

  static async connect(url: string): Promise<TextClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      }),
      5000,
      'socket open',
    );
    return new TextClient(ws);
  }

  /** Sends the start frame; resolves with the ms from just before the send to ready received. */
  async start(sessionId: string, apiKey: string, resumeToken?: string): Promise<number> {
    const t0 = performance.now();
    this.ws.send(JSON.stringify({ type: 'start', session_id: sessionId, api_key: apiKey, mode: { kind: 'service', modality: 'text', greeting: false }, ...(resumeToken ? { resume_token: resumeToken } : {}) }));
    const ready = await this.next('ready');
    const rtt = performance.now() - t0;
    this.token = String(ready.resume_token);
    return rtt;
  }

  /** One typed turn; resolves with the reply's utterance text. */
  async turn(text: string): Promise<string> {
    this.ws.send(JSON.stringify({ type: 'input_text', text }));
    const utterance = await this.next('utterance');
    await this.next('done');
    this.frames = [];
    return String(utterance.text);
  }

  /** Like a lost network: no close handshake. Resolves with the time of the terminate call. */
  drop(): number {
    const at = performance.now();
    this.ws.terminate();
    return at;
  }

  private async next(type: string, timeoutMs = 10000): Promise<Record<string, unknown>> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex((f) => f.type === type || f.type === 'error');
      if (index >= 0) {
        const f = this.frames[index]!;
        this.frames.splice(0, index + 1);
        if (f.type === 'error') throw new Error(`server error: ${JSON.stringify(f.body)}`);
        return f.body;
      }
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`timed out waiting for ${type}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}

/** V8's gc(), exposed at run time (no --expose-gc needed on the command line). */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

async function settledHeap(gc: () => void): Promise<{ heap: number; rss: number }> {
  await sleep(300);
  for (let i = 0; i < 3; i += 1) {
    gc();
    await sleep(50);
  }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

async function conversation(url: string, apiKey: string, sessionId: string): Promise<TextClient> {
  const client = await TextClient.connect(url);
  await client.start(sessionId, apiKey);
  for (let i = 1; i <= TURNS; i += 1) await client.turn(message(i));
  return client;
}

async function waitPut(stash: RecordingStash, token: string): Promise<number> {
  const deadline = performance.now() + 5000;
  for (;;) {
    const at = stash.putAt.get(token);
    if (at !== undefined) return at;
    if (performance.now() > deadline) throw new Error('the dropped conversation never reached the stash');
    await new Promise((r) => setImmediate(r));
  }
}

export async function run(): Promise<Row[]> {
  const gc = exposeGc();
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-resume-'));
  const stash = new RecordingStash();
  let server: RunningServer | undefined;
  try {
    const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', LLM_PROVIDER: 'local', LOCAL_LLM_WORD_DELAY_MS: '0', MAX_SESSIONS: '5000', RESUME_TTL_S: '600' });
    const stores = { ...(await createStores(config, { warn: () => undefined, info: () => undefined })), stash };
    server = await startServer(config, { stores, voice: { ok: false, reason: 'the resume benchmark is text only' } });
    const url = `${server.url.replace(/^http/, 'ws')}/ws`;
    const apiKey = (await server.context.stores.keys.create('bench')).key;

    // --- drop → stash, and resume vs fresh start ---------------------------------------------
    progress(`resume: one ${TURNS}-turn conversation, then ${RTT_SAMPLES} drop/resume cycles against fresh starts`);
    let client = await conversation(url, apiKey, 'bench-resume-rtt');
    const dropToPut: number[] = [];
    const resumeRtt: number[] = [];
    const freshRtt: number[] = [];
    for (let i = 0; i < RTT_SAMPLES + 3; i += 1) {
      const token = client.token;
      const droppedAt = client.drop();
      const putAt = await waitPut(stash, token);
      // Alternate which goes first so drift (GC, JIT) affects both alike.
      const fresh = await TextClient.connect(url);
      const resumed = await TextClient.connect(url);
      let f: number;
      let r: number;
      if (i % 2 === 0) {
        f = await fresh.start(`bench-fresh-${i}`, apiKey);
        r = await resumed.start('bench-resume-rtt', apiKey, token);
      } else {
        r = await resumed.start('bench-resume-rtt', apiKey, token);
        f = await fresh.start(`bench-fresh-${i}`, apiKey);
      }
      fresh.drop();
      // The first cycles warm the paths up.
      if (i >= 3) {
        dropToPut.push(putAt - droppedAt);
        resumeRtt.push(r);
        freshRtt.push(f);
      }
      client = resumed;
    }
    // The restored conversation really holds the 50 turns: the local model counts the user messages.
    const check = await client.turn('how many messages so far?');
    const counted = Number(/message (\d+) of our conversation/.exec(check)?.[1] ?? NaN);
    if (counted !== TURNS + 1) throw new Error(`the resumed conversation lost history: the model counted ${counted} user messages, expected ${TURNS + 1} (${check})`);
    client.drop();

    // --- memory of K stashed conversations ----------------------------------------------------
    await sleep(500);
    const before = await settledHeap(gc);
    const stashedBefore = stash.size;
    progress(`resume: ${STASHED} conversations of ${TURNS} turns (${BUILD_PARALLEL} at a time), dropped into the stash`);
    stash.measureSizes = true;
    for (let i = 0; i < STASHED; i += BUILD_PARALLEL) {
      const batch = await Promise.all(Array.from({ length: Math.min(BUILD_PARALLEL, STASHED - i) }, (_, j) => conversation(url, apiKey, `bench-resume-mem-${i + j}`)));
      for (const c of batch) c.drop();
    }
    const deadline = performance.now() + 10000;
    while (stash.size < stashedBefore + STASHED && performance.now() < deadline) await sleep(20);
    if (stash.size < stashedBefore + STASHED) throw new Error(`only ${stash.size - stashedBefore} of ${STASHED} conversations reached the stash`);
    const after = await settledHeap(gc);
    const heapPer = (after.heap - before.heap) / STASHED;
    const rssPer = (after.rss - before.rss) / STASHED;
    const json = stash.sizes.map((s) => s.json);
    const v8 = stash.sizes.map((s) => s.v8);
    const messages = stash.sizes[0]?.messages ?? 0;
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

    const p = (xs: number[], q: number): number => round(percentile(xs, q), 2);
    const rttNote = `${resumeRtt.length} cycles after 3 warm-up, in-process server (local model, 0 ms/word); both on a fresh loopback socket, start frame sent → ready received`;
    return [
      {
        benchmark: name,
        metric: `drop → stash put p50, ${TURNS}-turn conversation`,
        value: p(dropToPut, 50),
        unit: 'ms',
        note:
          `p95 ${p(dropToPut, 95)} ms; ws.terminate() in the client → the server's stash.save() (recording wrapper around MemoryResumeStash, same process and clock): ` +
          `loopback close detection + teardown + snapshot (history copy, settings structuredClone); ${rttNote}`,
      },
      {
        benchmark: name,
        metric: `resume start → ready p50, ${TURNS}-turn conversation`,
        value: p(resumeRtt, 50),
        unit: 'ms',
        note:
          `p95 ${p(resumeRtt, 95)} ms; fresh start (no token) p50 ${p(freshRtt, 50)} ms, p95 ${p(freshRtt, 95)} ms: restoring ${TURNS} turns adds ≈ ${round(percentile(resumeRtt, 50) - percentile(freshRtt, 50), 2)} ms p50 ` +
          `(stash take + history restore + a new token); after the last resume the local model counted ${TURNS + 1} user messages in the restored history (checked); ${rttNote}`,
      },
      {
        benchmark: name,
        metric: `stash memory per ${TURNS}-turn conversation (JS heap)`,
        value: round(heapPer / 1024, 1),
        unit: 'KB',
        note:
          `(heapUsed after forced GCs with ${STASHED} stashed − before) / ${STASHED}: ${round(before.heap / 1048576, 1)} → ${round(after.heap / 1048576, 1)} MB; ` +
          `RSS delta ${round(rssPer / 1024, 1)} KB per conversation (${round(before.rss / 1048576, 1)} → ${round(after.rss / 1048576, 1)} MB; RSS keeps freed pages, so it is noisy); ` +
          `each holds ${messages} messages (${TURNS} user messages of ~90 characters, replies of the local model of ~130; a real model's longer replies scale it)`,
      },
      {
        benchmark: name,
        metric: `stash entry size per ${TURNS}-turn conversation (JSON)`,
        value: round(mean(json) / 1024, 1),
        unit: 'KB',
        note: `JSON.stringify of the StashEntry the server put (what a shared stash such as Redis would store); v8.serialize ${round(mean(v8) / 1024, 1)} KB; mean over ${json.length} entries; the in-heap figure above includes object overhead`,
      },
    ];
  } finally {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

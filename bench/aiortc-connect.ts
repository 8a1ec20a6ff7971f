import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { baseline } from './lib/baseline.ts';
import { ChildServer } from './lib/child-server.ts';
import { percentile, progress, round } from './lib/stats.ts';
import type { Row } from './types.ts';
import { oneCall } from './lib/webrtc-call.ts';

/**
 * WebRTC offer → connected from an independent stack (issue 19, point 4): aiortc (Debian's
 * python3-aiortc, bench/lib/aiortc_connect.py) calls the real server over its WebSocket
 * signaling, and every step is timed on aiortc's side (ms from webrtc_offer sent): the answer
 * back, ICE connected, DTLS connected (connectionState), `ready`, the first downlink audio frame.
 * Beside it, in the same run: aiortc calling aiortc in one process (the floor of aiortc's own
 * cost), and the werift test peer calling the server (bench/webrtc.ts's client).
 *
 * BENCH_BASELINE=<git ref> also starts that commit's server; rounds alternate between the two
 * servers so both see the same machine load.
 */

export const name = 'aiortc-connect';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./lib/aiortc_connect.py', import.meta.url));
const ROUNDS = 4;
const CALLS_PER_ROUND = Number(process.env.BENCH_CONNECT_CALLS ?? 6);
const WARMUP = 2;
const run$ = promisify(execFile);

type Marks = Partial<Record<'webrtc_ice' | 'gather' | 'answer' | 'answer_applied' | 'ice' | 'connected' | 'ready' | 'first_audio', number>> & { error?: string };

interface Target {
  label: string;
  server?: ChildServer;
  aiortc: Marks[];
  werift: number[];
}

async function aiortc(url: string, key: string, calls: number, hosts: 'loopback' | 'all'): Promise<Marks[]> {
  const { stdout } = await run$(PYTHON, [SCRIPT, url, key, String(calls), hosts], { timeout: 60000 + calls * 15000 });
  const marks = stdout.trim().split('\n').map((line) => JSON.parse(line) as Marks);
  const failed = marks.filter((m) => m.error);
  if (failed.length > 0) progress(`aiortc-connect: ${failed.length} aiortc calls failed: ${failed[0]!.error}`);
  return marks.filter((m) => !m.error);
}

export async function run(): Promise<Row[]> {
  const base = baseline();
  const trees = [{ label: 'this tree' }, ...(base ? [{ label: `baseline ${base.ref} (${base.sha.slice(0, 7)})`, repo: base.dir, env: base.env }] : [])];
  const targets: Target[] = [];
  try {
    for (const tree of trees) {
      progress(`aiortc-connect: starting ${tree.label}`);
      const server = await ChildServer.start({
        script: 'bench/lib/fake-voice-server.ts',
        env: { LOCAL_LLM_WORD_DELAY_MS: '0', WEBRTC_LOOPBACK_ONLY: '1', ...('env' in tree ? tree.env : {}) },
        ...(tree.repo ? { repo: tree.repo } : {}),
      });
      targets.push({ label: tree.label, server, aiortc: [], werift: [] });
    }
    // Warm-up (media worker start, JIT, WASM compile): discarded.
    for (const t of targets) {
      await aiortc(t.server!.wsUrl, t.server!.apiKey, WARMUP, 'loopback');
      for (let i = 0; i < WARMUP; i += 1) await oneCall(t.server!, 1000 + i);
    }
    for (let r = 0; r < ROUNDS; r += 1) {
      for (const t of r % 2 === 0 ? targets : [...targets].reverse()) {
        progress(`aiortc-connect: round ${r + 1}/${ROUNDS}, ${t.label}`);
        t.aiortc.push(...(await aiortc(t.server!.wsUrl, t.server!.apiKey, CALLS_PER_ROUND, 'loopback')));
        for (let i = 0; i < CALLS_PER_ROUND; i += 1) t.werift.push((await oneCall(t.server!, r * 100 + i)).connected);
      }
    }
  } finally {
    await Promise.all(targets.map((t) => t.server?.stop()));
  }
  progress('aiortc-connect: aiortc to aiortc (the floor)');
  const floor = await aiortc('self', '-', ROUNDS * CALLS_PER_ROUND, 'loopback');

  const rows: Row[] = [];
  const p = (xs: number[], q: number): number => round(percentile(xs, q), 1);
  const of = (marks: Marks[], f: (m: Marks) => number | undefined): number[] => marks.map(f).filter((v): v is number => v !== undefined);
  const steps = (marks: Marks[]): string => {
    const step = (label: string, f: (m: Marks) => number | undefined): string => {
      const xs = of(marks, f);
      return xs.length === 0 ? '' : `${label} p50 ${p(xs, 50)} / p95 ${p(xs, 95)}`;
    };
    return [
      step('offer → answer', (m) => m.answer),
      step('answer applied → ICE connected', (m) => (m.ice !== undefined && m.answer_applied !== undefined ? m.ice - m.answer_applied : undefined)),
      step('ICE → DTLS connected', (m) => (m.connected !== undefined && m.ice !== undefined ? m.connected - m.ice : undefined)),
      step('offer → ready', (m) => m.ready),
      step('offer → first downlink audio', (m) => m.first_audio),
      step("aiortc's own offer (its gathering)", (m) => m.gather),
    ]
      .filter(Boolean)
      .join('; ');
  };
  for (const t of targets) {
    const connected = of(t.aiortc, (m) => m.connected);
    rows.push({
      benchmark: name,
      metric: `aiortc → server: offer → connected p50, ${t.label}`,
      value: p(connected, 50),
      unit: 'ms',
      note: `target < 300 ms; p95 ${p(connected, 95)} ms over ${connected.length} calls (ICE + DTLS, aiortc's connectionState); ${steps(t.aiortc)} (ms)`,
    });
    rows.push({
      benchmark: name,
      metric: `werift → server: offer → connected p50, ${t.label}`,
      value: p(t.werift, 50),
      unit: 'ms',
      note: `p95 ${p(t.werift, 95)} ms over ${t.werift.length} calls; the werift test peer (signaling/testing/webrtc-test-peer.ts) in the bench process; as DTLS client werift waits a fixed 100 ms after ICE before its ClientHello`,
    });
  }
  const floorConnected = of(floor, (m) => m.connected);
  rows.push({
    benchmark: name,
    metric: 'aiortc → aiortc: offer → connected p50 (the floor)',
    value: p(floorConnected, 50),
    unit: 'ms',
    note: `p95 ${p(floorConnected, 95)} ms over ${floorConnected.length} calls, both peers in one Python process on loopback, no signaling hop; ${steps(floor)} (ms)`,
  });
  const method = `${ROUNDS} rounds of ${CALLS_PER_ROUND} calls one after another per peer kind${targets.length > 1 ? ', alternating between the servers' : ''}, after ${WARMUP} warm-up calls; server: bench/lib/fake-voice-server.ts in a child process, WEBRTC_LOOPBACK_ONLY=1, media workers as default; aiortc offers 127.0.0.1 only`;
  for (const r of rows) r.note += `; ${method}`;
  return rows;
}

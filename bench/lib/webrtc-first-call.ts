import { loadavg } from 'node:os';
import type { Row } from '../types.ts';
import type { ChildServer } from './child-server.ts';
import { percentile, progress, round } from './stats.ts';
import { oneCall, type Connect } from './webrtc-call.ts';

/**
 * The FIRST WebRTC call on a fresh server process (issue 19): with the media workers started at
 * the first call (WEBRTC_WARM_WORKERS=0, before rtc7), started and loaded before the server
 * listens (rtc7), and, the default since rtc8, each of them having called itself once before it
 * said ready (WEBRTC_WARM_CALL). Each round starts one fresh server of each kind, in rotating
 * order, places one call on it, then a later one, and stops it; beside the calls, the server's
 * start-up (spawned → listening) shows what each warm-up moved there.
 */
const FRESH_SERVERS = Number(process.env.BENCH_FIRST_CALL_SERVERS ?? 10);
const KINDS = [
  { label: 'lazy (workers start at the first call)', env: { WEBRTC_WARM_WORKERS: '0' } },
  { label: 'warm (workers ready before listening, no warm-up call)', env: { WEBRTC_WARM_WORKERS: '1', WEBRTC_WARM_CALL: '0' } },
  { label: 'called (warm, each worker has called itself once)', env: { WEBRTC_WARM_WORKERS: '1', WEBRTC_WARM_CALL: '1' } },
] as const;
/** BENCH_FIRST_CALL_KINDS="1,2" runs only some kinds (indexes into KINDS): a shorter run. */
const RUN_KINDS = (process.env.BENCH_FIRST_CALL_KINDS ?? '0,1,2').split(',').map(Number);

interface Sample {
  startMs: number;
  call: Connect;
  /** A second call on the same server once the first has ended: what every later call costs. */
  later: Connect;
}

export async function firstCallRows(start: (env: Record<string, string>) => Promise<ChildServer>): Promise<Row[]> {
  const kinds = RUN_KINDS.map((k) => KINDS[k]!);
  // The bench's own werift peer pays its first-use costs here, not in the first measured call.
  progress('webrtc first-call: warming the client peer');
  await once(start, KINDS[1].env, -1);
  const samples: Sample[][] = kinds.map(() => []);
  for (let r = 0; r < FRESH_SERVERS; r += 1) {
    // Each kind goes first, middle and last in turn.
    for (let i = 0; i < kinds.length; i += 1) {
      const k = (i + r) % kinds.length;
      progress(`webrtc first-call: round ${r + 1}/${FRESH_SERVERS}, ${kinds[k]!.label}`);
      samples[k]!.push(await once(start, kinds[k]!.env, r));
    }
  }
  const p = (xs: number[]): string => `${round(percentile(xs, 50), 1)} (p95 ${round(percentile(xs, 95), 1)})`;
  const method = `${FRESH_SERVERS} fresh server processes of each kind (bench/lib/fake-voice-server.ts, WEBRTC_LOOPBACK_ONLY=1, media workers as configured), started in rotating order, one call each from the werift test peer in the bench process, then a second (later) call; load average ${loadavg()[0]!.toFixed(2)} at the end`;
  const figure = (f: (s: Sample) => number): string => kinds.map((kind, k) => `${kind.label.split(' ')[0]} ${p(samples[k]!.map(f))}`).join(' → ');
  // The figure of the table is the default configuration's: the last kind run.
  const value = (f: (s: Sample) => number): number => round(percentile(samples[kinds.length - 1]!.map(f), 50), 1);
  const label = kinds[kinds.length - 1]!.label.split(' ')[0];
  return [
    {
      benchmark: 'webrtc',
      metric: `first call on a fresh server: offer → webrtc_answer p50, ${label}`,
      value: value((s) => s.call.answer),
      unit: 'ms',
      note: `p50 (p95) ms, ${figure((s) => s.call.answer)}; a later call ${figure((s) => s.later.answer)}; ${method}`,
    },
    {
      benchmark: 'webrtc',
      metric: `first call on a fresh server: offer → connected p50, ${label}`,
      value: value((s) => s.call.connected),
      unit: 'ms',
      note: `p50 (p95) ms, ${figure((s) => s.call.connected)}; a later call ${figure((s) => s.later.connected)}; offer → ready ${figure((s) => s.call.ready)}; ${method}`,
    },
    {
      benchmark: 'webrtc',
      metric: `server start-up, spawned → listening p50, ${label}`,
      value: value((s) => s.startMs),
      unit: 'ms',
      note: `p50 (p95) ms, ${figure((s) => s.startMs)} (tsx's wrapper and the TypeScript loader included); ${method}`,
    },
  ];
}

async function once(start: (env: Record<string, string>) => Promise<ChildServer>, env: Record<string, string>, index: number): Promise<Sample> {
  const server = await start(env);
  try {
    const call = await oneCall(server, index);
    return { startMs: server.startMs, call, later: await oneCall(server, index + 1000) };
  } finally {
    await server.stop();
  }
}

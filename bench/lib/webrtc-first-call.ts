import type { Row } from '../types.ts';
import type { ChildServer } from './child-server.ts';
import { percentile, progress, round } from './stats.ts';
import { oneCall, type Connect } from './webrtc-call.ts';

/**
 * The FIRST WebRTC call on a fresh server process (issue 19, rtc7): with the media workers
 * started at the first call (WEBRTC_WARM_WORKERS=0, every server before this change) against
 * started and loaded before the server listens (=1, the default now). Each round starts one fresh
 * server of each kind, in alternating order, places one call on it and stops it; beside the
 * call, the server's start-up (spawned → listening) shows what the warm-up moved there.
 */
const FRESH_SERVERS = Number(process.env.BENCH_FIRST_CALL_SERVERS ?? 10);
const KINDS = [
  { label: 'lazy (workers start at the first call)', env: { WEBRTC_WARM_WORKERS: '0' } },
  { label: 'warm (workers ready before listening)', env: { WEBRTC_WARM_WORKERS: '1' } },
] as const;

interface Sample {
  startMs: number;
  call: Connect;
}

export async function firstCallRows(start: (env: Record<string, string>) => Promise<ChildServer>): Promise<Row[]> {
  // The bench's own werift peer pays its first-use costs here, not in the first measured call.
  progress('webrtc first-call: warming the client peer');
  await once(start, KINDS[1].env, -1);
  const samples: Sample[][] = KINDS.map(() => []);
  for (let r = 0; r < FRESH_SERVERS; r += 1) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) {
      progress(`webrtc first-call: round ${r + 1}/${FRESH_SERVERS}, ${KINDS[k]!.label}`);
      samples[k]!.push(await once(start, KINDS[k]!.env, r));
    }
  }
  const p = (xs: number[]): string => `${round(percentile(xs, 50), 1)} (p95 ${round(percentile(xs, 95), 1)})`;
  const method = `${FRESH_SERVERS} fresh server processes of each kind (bench/lib/fake-voice-server.ts, WEBRTC_LOOPBACK_ONLY=1, media workers as configured), started alternately, one call each from the werift test peer in the bench process`;
  const figure = (f: (s: Sample) => number): string => KINDS.map((kind, k) => `${kind.label.split(' ')[0]} ${p(samples[k]!.map(f))}`).join(' → ');
  const value = (k: number, f: (s: Sample) => number): number => round(percentile(samples[k]!.map(f), 50), 1);
  return [
    {
      benchmark: 'webrtc',
      metric: 'first call on a fresh server: offer → webrtc_answer p50, warm workers',
      value: value(1, (s) => s.call.answer),
      unit: 'ms',
      note: `p50 (p95) ms, ${figure((s) => s.call.answer)}; ${method}`,
    },
    {
      benchmark: 'webrtc',
      metric: 'first call on a fresh server: offer → connected p50, warm workers',
      value: value(1, (s) => s.call.connected),
      unit: 'ms',
      note: `p50 (p95) ms, ${figure((s) => s.call.connected)}; offer → ready ${figure((s) => s.call.ready)}; ${method}`,
    },
    {
      benchmark: 'webrtc',
      metric: 'server start-up, spawned → listening p50, warm workers',
      value: value(1, (s) => s.startMs),
      unit: 'ms',
      note: `p50 (p95) ms, ${figure((s) => s.startMs)} (tsx's wrapper and the TypeScript loader included); ${method}`,
    },
  ];
}

async function once(start: (env: Record<string, string>) => Promise<ChildServer>, env: Record<string, string>, index: number): Promise<Sample> {
  const server = await start(env);
  try {
    return { startMs: server.startMs, call: await oneCall(server, index) };
  } finally {
    await server.stop();
  }
}

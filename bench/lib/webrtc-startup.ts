import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Row } from '../types.ts';
import type { Baseline } from './baseline.ts';
import type { ChildServer } from './child-server.ts';
import { percentile, progress, round } from './stats.ts';

/**
 * Server start-up, spawned → listening, of a baseline commit (BENCH_BASELINE) against this tree
 * with and without the media workers' warm-up call, fresh processes started in rotating order so
 * all see the same machine (rtc8: the media workers load alongside the recognisers instead of
 * after them, then call themselves once). Two servers:
 * - the installed build as `npm start` runs it (`node dist/signaling/main.js`, each tree built
 *   first), default local providers (pocketsphinx, flite, Silero, warm media workers);
 * - the WebRTC bench's server (bench/lib/fake-voice-server.ts under tsx), as the first-call part
 *   starts it.
 */
const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 10);
/** BENCH_STARTUP_SERVERS="installed" or "bench": one of the two (a run of both takes about 6 minutes). */
const SERVERS = (process.env.BENCH_STARTUP_SERVERS ?? 'installed,bench').split(',');
const START_TIMEOUT_MS = 30000;

/** A server to start: a tree and the environment it gets beyond the defaults. */
export interface Kind {
  label: string;
  repo: string;
  env: Record<string, string>;
}
type Start = (kind: Kind) => Promise<number>;

export async function startupRows(base: Baseline, repo: string, benchServer: (kind: Kind) => Promise<ChildServer>): Promise<Row[]> {
  for (const dir of [base.dir, repo]) {
    progress(`webrtc startup: building ${dir}`);
    execFileSync(process.execPath, ['.ci/build.mjs'], { cwd: dir, stdio: 'ignore' });
  }
  // The baseline with no media worker at start is how servers started before rtc7; this tree
  // without its warm-up call separates rtc8's two changes (the concurrent load, then the call).
  const kinds: Kind[] = [
    { label: `${base.ref} (${base.sha.slice(0, 8)}), WEBRTC_WARM_WORKERS=0`, repo: base.dir, env: { ...base.env, WEBRTC_WARM_WORKERS: '0' } },
    { label: `${base.ref} (${base.sha.slice(0, 8)})`, repo: base.dir, env: base.env },
    { label: 'this tree, WEBRTC_WARM_CALL=0', repo, env: { WEBRTC_WARM_CALL: '0' } },
    { label: 'this tree', repo, env: {} },
  ];
  const loadBefore = loadavg()[0]!;
  const installed = SERVERS.includes('installed') ? await alternate(kinds, 'installed build', installedStart) : undefined;
  const bench = SERVERS.includes('bench')
    ? await alternate(kinds, 'bench server', async (kind) => {
        const server = await benchServer(kind);
        await server.stop();
        return server.startMs;
      })
    : undefined;
  const load = `load average ${loadBefore.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`;
  const p = (xs: number[]): string => `${round(percentile(xs, 50), 0)} (p95 ${round(percentile(xs, 95), 0)})`;
  const row = (what: string, samples: number[][], how: string): Row => ({
    benchmark: 'webrtc',
    metric: `server start-up, spawned → listening p50, ${what}`,
    value: round(percentile(samples[samples.length - 1]!, 50), 0),
    unit: 'ms',
    note: `p50 (p95) ms, ${kinds.map((kind, k) => `${kind.label} ${p(samples[k]!)}`).join(' → ')}; ${ROUNDS} fresh starts of each, in rotating order; ${how}; ${load}`,
  });
  return [
    ...(installed ? [row('installed build, default local providers', installed, '`node dist/signaling/main.js` with PORT, HOST, DATA_DIR only (pocketsphinx, flite, Silero, media workers warm)')] : []),
    ...(bench ? [row('WebRTC bench server (fake ASR/TTS)', bench, 'bench/lib/fake-voice-server.ts under tsx, WEBRTC_LOOPBACK_ONLY=1, as the first-call part starts it')] : []),
  ];
}

/** One start of each kind per round, the order rotating from round to round. */
async function alternate(kinds: readonly Kind[], label: string, start: Start): Promise<number[][]> {
  const samples: number[][] = kinds.map(() => []);
  for (let r = 0; r < ROUNDS; r += 1) {
    for (let i = 0; i < kinds.length; i += 1) {
      const k = (i + r) % kinds.length;
      progress(`webrtc startup: ${label}, round ${r + 1}/${ROUNDS}, ${kinds[k]!.label}`);
      samples[k]!.push(await start(kinds[k]!));
    }
  }
  return samples;
}

/** `node dist/signaling/main.js` in `repo` until its listening line, then SIGTERM and its exit. */
async function installedStart({ repo, env: extra }: Kind): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-startup-'));
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ...extra };
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, ['dist/signaling/main.js'], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  try {
    return await new Promise<number>((ok, fail) => {
      let out = '';
      const timer = setTimeout(() => fail(new Error(`no listening line within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      child.stdout.on('data', (chunk: Buffer) => {
        out += String(chunk);
        if (!/listening on http/.test(out)) return;
        clearTimeout(timer);
        ok(performance.now() - spawnedAt);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        fail(new Error(`the server exited before listening (code ${code})`));
      });
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

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
 * Server start-up, spawned → listening, of a baseline commit (BENCH_BASELINE) against this tree,
 * fresh processes started alternately so both see the same machine (rtc8: the media workers load
 * alongside the recognisers instead of after them). Two servers:
 * - the installed build as `npm start` runs it (`node dist/signaling/main.js`, each tree built
 *   first), default local providers (pocketsphinx, flite, Silero, warm media workers);
 * - the WebRTC bench's server (bench/lib/fake-voice-server.ts under tsx), as the first-call part
 *   starts it.
 */
const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 10);
const START_TIMEOUT_MS = 30000;

type Start = (repo: string) => Promise<number>;

export async function startupRows(base: Baseline, repo: string, benchServer: (repo: string) => Promise<ChildServer>): Promise<Row[]> {
  for (const dir of [base.dir, repo]) {
    progress(`webrtc startup: building ${dir}`);
    execFileSync(process.execPath, ['.ci/build.mjs'], { cwd: dir, stdio: 'ignore' });
  }
  const loadBefore = loadavg()[0]!;
  const installed = await alternate(base.dir, repo, 'installed build', installedStart);
  const bench = await alternate(base.dir, repo, 'bench server', async (dir) => {
    const server = await benchServer(dir);
    await server.stop();
    return server.startMs;
  });
  const load = `load average ${loadBefore.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`;
  const p = (xs: number[]): string => `${round(percentile(xs, 50), 0)} (p95 ${round(percentile(xs, 95), 0)})`;
  const row = (what: string, samples: { before: number[]; after: number[] }, how: string): Row => ({
    benchmark: 'webrtc',
    metric: `server start-up, spawned → listening p50, ${what}`,
    value: round(percentile(samples.after, 50), 0),
    unit: 'ms',
    note: `p50 (p95) ms, ${base.ref} (${base.sha.slice(0, 8)}) ${p(samples.before)} → this tree ${p(samples.after)}; ${ROUNDS} fresh starts of each, alternating; ${how}; ${load}`,
  });
  return [
    row('installed build, default local providers', installed, '`node dist/signaling/main.js` with PORT, HOST, DATA_DIR only (pocketsphinx, flite, Silero, media workers warm)'),
    row('WebRTC bench server (fake ASR/TTS)', bench, 'bench/lib/fake-voice-server.ts under tsx, WEBRTC_LOOPBACK_ONLY=1, as the first-call part starts it'),
  ];
}

async function alternate(before: string, after: string, label: string, start: Start): Promise<{ before: number[]; after: number[] }> {
  const samples = { before: [] as number[], after: [] as number[] };
  for (let r = 0; r < ROUNDS; r += 1) {
    const order: Array<'before' | 'after'> = r % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    for (const kind of order) {
      progress(`webrtc startup: ${label}, round ${r + 1}/${ROUNDS}, ${kind}`);
      samples[kind].push(await start(kind === 'before' ? before : after));
    }
  }
  return samples;
}

/** `node dist/signaling/main.js` in `repo` until its listening line, then SIGTERM and its exit. */
async function installedStart(repo: string): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-startup-'));
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir };
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

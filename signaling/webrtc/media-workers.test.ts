import { Writable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { MediaWorkerPool, MediaWorkerStartError } from '../../media/webrtc/worker-peer.ts';
import { loadConfig } from '../config.ts';
import { warmMediaWorkers } from './media-workers.ts';

/** The server's start-up wiring of the media workers, on pools of stand-in threads (media/testing/fixture-media-worker.mjs). */
const FIXTURE = new URL('../../media/testing/fixture-media-worker.mjs', import.meta.url);
const threadsOf = (p: MediaWorkerPool): Array<{ worker: Worker }> => (p as unknown as { workers: Array<{ worker: Worker }> }).workers;

function fixturePool(mode: 'ready' | 'throw' | 'hang', size = 2): MediaWorkerPool {
  process.env.PARLEY_FIXTURE_WORKER = mode;
  const pool = new MediaWorkerPool(size, 0, FIXTURE);
  return pool;
}

function logged() {
  const lines: Array<{ level: number; msg: string; [key: string]: unknown }> = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { log, lines };
}

// The threads are left to the process's end (unref'd): a warm pool would replace each one stopped here.
afterAll(() => {
  delete process.env.PARLEY_FIXTURE_WORKER;
});

describe('warmMediaWorkers (before the server listens)', () => {
  it('waits until every worker is ready and says so once', async () => {
    const pool = fixturePool('ready');
    const { log, lines } = logged();
    await warmMediaWorkers(loadConfig({ WEBRTC_MEDIA_WORKERS: '2' }), log, pool);
    expect(pool.ready).toBe(2);
    expect(lines).toEqual([expect.objectContaining({ level: 30, msg: 'media workers ready', workers: 2, start_ms: expect.any(Number) })]);
  });

  it('fails the start with what stopped the worker and what to set, logged as an error', async () => {
    const pool = fixturePool('throw');
    const { log, lines } = logged();
    const error = await warmMediaWorkers(loadConfig({ WEBRTC_MEDIA_WORKERS: '2' }), log, pool).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaWorkerStartError);
    expect((error as Error).message).toBe(
      'a media worker thread stopped before it was ready: cannot load werift (fixture). WebRTC calls run in these threads: fix the installation, or set WEBRTC_MEDIA_WORKERS=0 to run calls on the main thread',
    );
    expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'media workers could not start', reason: expect.stringContaining('cannot load werift') })]);
  });

  it('listens anyway past WEBRTC_WORKER_START_TIMEOUT_MS, with a warning, the workers still starting', async () => {
    const pool = fixturePool('hang');
    const { log, lines } = logged();
    await warmMediaWorkers(loadConfig({ WEBRTC_MEDIA_WORKERS: '2', WEBRTC_WORKER_START_TIMEOUT_MS: '150' }), log, pool);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: 'media workers not ready within 150 ms (0 of 2); listening anyway, the first WebRTC calls wait for them', workers: 2, ready: 0 }),
    ]);
    expect(threadsOf(pool)).toHaveLength(2);
  });

  it('starts nothing with WEBRTC_WARM_WORKERS=0 or WEBRTC_MEDIA_WORKERS=0', async () => {
    for (const env of [{ WEBRTC_WARM_WORKERS: '0' }, { WEBRTC_MEDIA_WORKERS: '0' }]) {
      const pool = fixturePool('ready');
      const { log, lines } = logged();
      await warmMediaWorkers(loadConfig(env), log, pool);
      expect(threadsOf(pool)).toEqual([]);
      expect(lines).toEqual([]);
    }
  });
});

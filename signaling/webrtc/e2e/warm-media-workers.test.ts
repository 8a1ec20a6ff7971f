import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MediaWorkerPool, ReplacementOutcome } from '../../../media/webrtc/worker-peer.ts';
import { workerPoolFor } from '../media-workers.ts';
import { startTestServer, WARM_MEDIA_WORKERS, type TestServer } from '../../testing/test-server.ts';
import { WsTestClient } from '../../testing/ws-test-client.ts';
import { WebRtcTestPeer } from '../../testing/webrtc-test-peer.ts';
import { sid } from '../../testing/conversation.ts';

/**
 * The first WebRTC call on a fresh server (issue 19): the media workers are started and have
 * loaded werift and Opus before listen() resolves, so no call's offer waits for a thread's start;
 * one that dies is replaced by a ready one before the next call comes.
 */
type Thread = { worker: Worker; readyAt: number | undefined };
const threadsOf = (p: MediaWorkerPool): Thread[] => (p as unknown as { workers: Thread[] }).workers;

let t: TestServer;
let pool: MediaWorkerPool;
/** Workers ready when startTestServer (listen) resolved, before anything else ran. */
let readyAtListen: number;
beforeAll(async () => {
  t = await startTestServer({ ...WARM_MEDIA_WORKERS, LOCAL_LLM_WORD_DELAY_MS: '0', STUN_URLS: '', WEBRTC_LOOPBACK_ONLY: '1', WEBRTC_MEDIA_WORKERS: '2' });
  // The server's own pool (workerPoolFor is how the server finds it).
  pool = workerPoolFor(t.server.context.config, t.server.context.log);
  readyAtListen = pool.ready;
});
afterAll(async () => {
  await t.stop();
});

/** A call up to `ready`; `offeredAt` is when its webrtc_offer left. */
async function call() {
  const ws = await WsTestClient.open(t.wsUrl);
  ws.send({ type: 'start', session_id: sid('rtc-warm'), api_key: t.key, mode: { kind: 'service', greeting: false }, audio: { sr: 48000 }, transport: { kind: 'webrtc' } });
  await ws.waitFor('webrtc_ice');
  const peer = new WebRtcTestPeer();
  const sdp = await peer.offer();
  const offeredAt = performance.now();
  ws.send({ type: 'webrtc_offer', sdp });
  await peer.accept((await ws.waitFor('webrtc_answer')).sdp);
  const ready = await Promise.race([ws.waitFor('ready', () => true, 8000), peer.waitFor('ready')]);
  expect(ready.modality).toBe('voice');
  return { ws, peer, offeredAt };
}

describe('media workers warm before the server listens', () => {
  it('every worker has loaded its modules when listen() resolves, before the first offer', async () => {
    expect(pool.size).toBe(2);
    expect(readyAtListen).toBe(2);
    const { ws, peer, offeredAt } = await call();
    for (const thread of threadsOf(pool)) expect(thread.readyAt).toBeLessThan(offeredAt);
    ws.assertProtocol();
    await peer.close();
    ws.close();
  });

  it('a worker that dies is replaced by a ready one, and the next call is answered on ready workers', async () => {
    const [first, second] = threadsOf(pool);
    const replaced = new Promise<ReplacementOutcome>((resolve) => {
      const log = pool.onReplaced;
      pool.onReplaced = (outcome) => {
        log?.(outcome);
        resolve(outcome);
      };
    });
    await first!.worker.terminate();
    expect(await replaced).toMatchObject({ ok: true });
    const threads = threadsOf(pool);
    expect(threads).toHaveLength(2);
    expect(threads).toContain(second);
    expect(threads).not.toContain(first);
    expect(pool.ready).toBe(2);

    const { ws, peer, offeredAt } = await call();
    for (const thread of threadsOf(pool)) expect(thread.readyAt).toBeLessThan(offeredAt);
    ws.assertProtocol();
    await peer.close();
    ws.close();
  });
});

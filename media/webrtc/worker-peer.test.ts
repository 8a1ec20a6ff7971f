import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { WebRtcTestPeer } from '../../signaling/testing/webrtc-test-peer.ts';
import { OfferError, type CallPeerEvents } from './call-peer.ts';
import { MediaWorkerPool } from './worker-peer.ts';

/** Real worker threads, driven without a server: what the pool promises its callers. */
const pool = new MediaWorkerPool(1);
const workersOf = (p: MediaWorkerPool): Array<{ worker: Worker }> => (p as unknown as { workers: Array<{ worker: Worker }> }).workers;

function events(): CallPeerEvents & { gone: number; connected: number } {
  const e = {
    gone: 0,
    connected: 0,
    onAudio: () => undefined,
    onControl: () => undefined,
    onControlOpen: () => undefined,
    onConnected: () => {
      e.connected += 1;
    },
    onGone: () => {
      e.gone += 1;
    },
  };
  return e;
}
const config = { iceServers: [], additionalHostAddresses: ['127.0.0.1'], portRange: undefined, loopbackOnly: true };

afterAll(async () => {
  await Promise.all(workersOf(pool).map((w) => w.worker.terminate()));
});

describe('MediaWorkerPool', () => {
  it('answers offers in the worker, and refuses one without audio with an OfferError', async () => {
    const e = events();
    const peer = pool.createPeer({ ...config, ...e });
    const client = new WebRtcTestPeer();
    const answer = await peer.answer(await client.offer());
    expect(answer).toMatch(/^m=audio /m);
    await client.accept(answer);
    while (e.connected === 0) await new Promise((r) => setTimeout(r, 10));
    expect(peer.downlinkLeadMs).toBe(100);

    const bad = pool.createPeer({ ...config, ...events() });
    await expect(bad.answer('v=0\r\ns=-\r\nt=0 0\r\n')).rejects.toBeInstanceOf(OfferError);
    await bad.close();
    await client.close();
    await peer.close();
  });

  it('ends every call of a worker that dies as gone, and puts new calls on a fresh worker', async () => {
    const e = events();
    const peer = pool.createPeer({ ...config, ...e });
    const clients = [new WebRtcTestPeer(), new WebRtcTestPeer()];
    const pending = peer.answer(await clients[0]!.offer());
    const [host] = workersOf(pool);
    await host!.worker.terminate();
    await expect(pending).rejects.toThrow();
    expect(e.gone).toBe(1);
    expect(peer.controlOpen).toBe(false);
    peer.sendFrame(new Int16Array(320)); // a call that is gone ignores audio rather than throwing

    const next = pool.createPeer({ ...config, ...events() });
    expect(workersOf(pool)[0]).not.toBe(host);
    expect(await next.answer(await clients[1]!.offer())).toMatch(/^m=audio /m);
    await next.close();
    await Promise.all(clients.map((c) => c.close()));
  });
});

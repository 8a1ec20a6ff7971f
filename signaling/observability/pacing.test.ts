import { afterAll, describe, expect, it } from 'vitest';
import { DownlinkPacer } from '../../media/downlink-pacer.ts';
import { RtcTestPeer } from '../../media/testing/rtc-test-peer.ts';
import { MediaWorkerPool } from '../../media/webrtc/worker-peer.ts';
import { instrumentPacing, mainPacingLateness, WORKER_INSTRUMENTATION, workerPacingReports } from './pacing.ts';

/** The pacing figures the benchmarks read: the main thread's pacers, and each media worker's. */

const pool = new MediaWorkerPool(1, 0, WORKER_INSTRUMENTATION);
afterAll(async () => {
  await Promise.all((pool as unknown as { workers: Array<{ worker: { terminate(): Promise<number> } }> }).workers.map((w) => w.worker.terminate()));
});

describe('pacing instrumentation', () => {
  it("hears every frame the main thread's pacers send after their lead", async () => {
    instrumentPacing();
    mainPacingLateness(true);
    const pacer = new DownlinkPacer({ sampleRate: 16000, leadMs: 60, send: () => undefined });
    pacer.push(new Int16Array(16000 * 0.2)); // 10 frames, 3 of them the lead
    await pacer.whenIdle();
    pacer.close();
    const summary = mainPacingLateness(true);
    expect(summary.count).toBe(7);
    expect(summary.max).toBeGreaterThanOrEqual(0);
    expect(mainPacingLateness(false).count).toBe(0);
  });

  it('gets a media worker its own report: RTP send lateness on its clock and its GC pauses', async () => {
    let connected!: () => void;
    const up = new Promise<void>((resolve) => (connected = resolve));
    const peer = pool.createPeer({
      iceServers: [], additionalHostAddresses: ['127.0.0.1'], portRange: undefined, loopbackOnly: true,
      onAudio: () => undefined, onControl: () => undefined, onControlOpen: () => undefined, onConnected: () => connected(), onGone: () => undefined,
    });
    const client = new RtcTestPeer();
    await client.accept(await peer.answer(await client.offer()));
    await up;
    await workerPacingReports([pool], true);
    // Half a second of downlink: the first packets leave at once, the rest on the worker's clock.
    for (let i = 0; i < 25; i += 1) peer.sendFrame(new Int16Array(960));
    await client.waitReceived(25);
    const [report] = await workerPacingReports([pool], true);
    expect(report!.count).toBeGreaterThan(10);
    expect(report!.gc).toEqual({ count: expect.any(Number), totalMs: expect.any(Number), maxMs: expect.any(Number) });
    await client.close();
    await peer.close();
  });
});

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { RtcTestPeer as WebRtcTestPeer } from '../testing/rtc-test-peer.ts';
import { setMediaStatsHooks } from '../media-stats.ts';
import { OfferError, type CallPeerEvents } from './call-peer.ts';
import { MediaWorkerPool, MediaWorkerStartError, type ReplacementOutcome } from './worker-peer.ts';

/** Real worker threads, driven without a server: what the pool promises its callers. */
const pool = new MediaWorkerPool(1);
type Hosted = { worker: Worker; readyAt: number | undefined };
const workersOf = (p: MediaWorkerPool): Hosted[] => (p as unknown as { workers: Hosted[] }).workers;

function events(): CallPeerEvents & { gone: number; connected: number; whenConnected: Promise<void> } {
  let connected!: () => void;
  const e = {
    gone: 0,
    connected: 0,
    whenConnected: new Promise<void>((resolve) => (connected = resolve)),
    onAudio: () => undefined,
    onControl: () => undefined,
    onControlOpen: () => undefined,
    onConnected: () => {
      e.connected += 1;
      connected();
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
    await e.whenConnected;
    expect(peer.downlinkLeadMs).toBe(200);
    expect(peer.sendAheadMs).toBe(60);

    const bad = pool.createPeer({ ...config, ...events() });
    await expect(bad.answer('v=0\r\ns=-\r\nt=0 0\r\n')).rejects.toBeInstanceOf(OfferError);
    await bad.close();
    await client.close();
    await peer.close();
  });

  it("relays the worker's media stats to this thread's hooks when flushed: each paced packet's lateness", async () => {
    const late: number[] = [];
    setMediaStatsHooks({ rtpLate: (ms) => late.push(ms) });
    const { peer, client } = await connectedCall(pool);
    await pool.flushStats();
    late.length = 0;
    // Half a second of downlink: the first packets leave at once, the rest on the worker's clock.
    for (let i = 0; i < 25; i += 1) peer.sendFrame(new Int16Array(960));
    await client.waitReceived(25);
    await pool.flushStats();
    expect(late.length).toBeGreaterThan(10);
    for (const ms of late) expect(ms).toBeGreaterThanOrEqual(-0.25);
    setMediaStatsHooks({ rtpLate: () => undefined });
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

  it('runs its worker threads at the nice value asked for, and says once when the system refuses it', async () => {
    // Nice 7 lowers priority, which any process may do; the worker thread alone takes it.
    const gentle = new MediaWorkerPool(1, 7);
    const peer = gentle.createPeer({ ...config, ...events() });
    const client = new WebRtcTestPeer();
    await client.accept(await peer.answer(await client.offer()));
    const nices = threadNices();
    expect(nices.filter((n) => n === 7)).toHaveLength(1);
    expect(nices[0]).toBe(0); // the main thread keeps its priority
    await client.close();
    await peer.close();

    // −21 is outside what setpriority accepts: the refusal reaches the pool's listener once.
    const refused = new MediaWorkerPool(1, -21);
    const reasons: string[] = [];
    refused.onPriorityRefused = (reason) => reasons.push(reason);
    const other = refused.createPeer({ ...config, ...events() });
    const client2 = new WebRtcTestPeer();
    await client2.accept(await other.answer(await client2.offer()));
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/not nice -21/);
    await client2.close();
    await other.close();
    await Promise.all([...workersOf(gentle), ...workersOf(refused)].map((w) => w.worker.terminate()));
  });
});

const FIXTURE = new URL('../testing/fixture-media-worker.mjs', import.meta.url);

/** A fixture pool (fixture-media-worker.mjs) whose threads start in `mode`. */
function fixturePool(mode: 'ready' | 'throw' | 'hang'): MediaWorkerPool {
  process.env.PARLEY_FIXTURE_WORKER = mode;
  return new MediaWorkerPool(1, 0, 0, FIXTURE);
}

function nextReplacement(p: MediaWorkerPool): Promise<ReplacementOutcome> {
  return new Promise((resolve) => (p.onReplaced = resolve));
}

/** A call on the pool from a test peer, once it is connected. */
async function connectedCall(p: MediaWorkerPool): Promise<{ peer: ReturnType<MediaWorkerPool['createPeer']>; client: WebRtcTestPeer }> {
  const e = events();
  const peer = p.createPeer({ ...config, ...e });
  const client = new WebRtcTestPeer();
  await client.accept(await peer.answer(await client.offer()));
  await e.whenConnected;
  return { peer, client };
}

/** One call on the pool from a test peer, connected, then closed at both ends. */
async function oneCall(p: MediaWorkerPool): Promise<void> {
  const { peer, client } = await connectedCall(p);
  await client.close();
  await peer.close();
}

describe('MediaWorkerPool started ahead of calls (warm)', () => {
  // Their threads are left to the process's end (unref'd): a warm pool would replace each one stopped here.
  afterAll(() => {
    delete process.env.PARLEY_FIXTURE_WORKER;
  });

  it('resolves only once every worker has loaded werift and Opus; a call placed after it waits for no start', async () => {
    const warm = new MediaWorkerPool(1);
    expect(warm.ready).toBe(0);
    const startMs = await warm.warm(30000);
    expect(warm.ready).toBe(1);
    const [host] = workersOf(warm);
    expect(startMs).toBe(host!.readyAt! - (host as unknown as { startedAt: number }).startedAt);
    // Warming again starts nothing new.
    await warm.warm(30000);
    expect(workersOf(warm)).toEqual([host]);

    const offeredAt = performance.now();
    await oneCall(warm);
    expect(host!.readyAt).toBeLessThan(offeredAt);
  });

  it('replaces a worker that dies at once with a new ready one, on which the next call is answered', async () => {
    const warm = new MediaWorkerPool(1);
    await warm.warm(30000);
    const [first] = workersOf(warm);
    const e = events();
    const peer = warm.createPeer({ ...config, ...e });
    const replaced = nextReplacement(warm);
    await first!.worker.terminate();
    expect(e.gone).toBe(1);
    const outcome = await replaced;
    expect(outcome).toEqual({ ok: true, startMs: expect.any(Number) });
    const [second] = workersOf(warm);
    expect(second).not.toBe(first);
    expect(warm.ready).toBe(1);

    const offeredAt = performance.now();
    const next = warm.createPeer({ ...config, ...events() });
    const client = new WebRtcTestPeer();
    expect(await next.answer(await client.offer())).toMatch(/^m=audio /m);
    expect(second!.readyAt).toBeLessThan(offeredAt);
    await client.close();
    await next.close();
    await peer.close();
  });

  it('with a warm-up call, each worker calls itself before it says ready, then carries real calls', async () => {
    const warm = new MediaWorkerPool(1, 0, 10000);
    let failures = 0;
    warm.onWarmCallFailed = () => (failures += 1);
    await warm.warm(30000);
    const [host] = workersOf(warm) as Array<Hosted & { warmCallMs: number | undefined }>;
    expect(host!.warmCallMs).toBeGreaterThan(0);
    expect(warm.warmCallMs).toBe(host!.warmCallMs);
    expect(failures).toBe(0);
    await oneCall(warm);
  });

  it('a warm-up call that fails (here past a 1 ms bound) is told once, and every worker is ready anyway', async () => {
    const warm = new MediaWorkerPool(2, 0, 1);
    const told: string[] = [];
    warm.onWarmCallFailed = (reason) => told.push(reason);
    await warm.warm(30000);
    expect(warm.ready).toBe(2);
    expect(told).toEqual([expect.stringMatching(/^the warm-up call did not finish within 1 ms \(/)]);
    expect(workersOf(warm).map((w) => (w as Hosted & { warmCallMs: number | undefined }).warmCallMs)).toEqual([undefined, undefined]);
    await oneCall(warm);
  });

  it('keeps no process alive: one with nothing but a warm, idle pool exits on its own', () => {
    const script = fileURLToPath(new URL('../testing/warm-pool-exit.ts', import.meta.url));
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 30_000 });
    expect({ status: child.status, stdout: child.stdout, stderr: child.stderr.slice(0, 200) }).toEqual({ status: 0, stdout: 'ready 1\n', stderr: '' });
  });

  it('rejects with why when a worker stops before it is ready, and does not start it again and again', async () => {
    const broken = fixturePool('throw');
    let replacements = 0;
    broken.onReplaced = () => (replacements += 1);
    const error = await broken.warm(30000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaWorkerStartError);
    expect(error).toMatchObject({ timedOut: false, message: 'a media worker thread stopped before it was ready: cannot load werift (fixture)' });
    expect(workersOf(broken)).toEqual([]);
    expect(broken.ready).toBe(0);
    expect(replacements).toBe(0);
  });

  it('rejects as timed out when the workers are not ready within the bound, and leaves them starting', async () => {
    const slow = fixturePool('hang');
    const error = await slow.warm(100).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaWorkerStartError);
    expect(error).toMatchObject({ timedOut: true, message: 'media workers not ready within 100 ms (0 of 1)' });
    expect(workersOf(slow)).toHaveLength(1);
  });

  it('says why when the replacement of a dead worker cannot start, and leaves the next start to the next call', async () => {
    const pool = fixturePool('ready');
    await pool.warm(30000);
    const [first] = workersOf(pool);
    process.env.PARLEY_FIXTURE_WORKER = 'throw';
    const outcome = nextReplacement(pool);
    await first!.worker.terminate();
    expect(await outcome).toEqual({ ok: false, reason: 'cannot load werift (fixture)' });
    expect(workersOf(pool)).toEqual([]);
  });
});

/** The nice value of every thread of this process, main thread first (/proc/self/task/<tid>/stat field 19). */
function threadNices(): number[] {
  const tids = readdirSync('/proc/self/task').map(Number).sort((a, b) => (a === process.pid ? -1 : b === process.pid ? 1 : a - b));
  return tids.map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

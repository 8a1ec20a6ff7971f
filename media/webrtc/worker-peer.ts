import { Worker } from 'node:worker_threads';
import { OfferError, type CallPeer, type CallPeerConfig, type CallPeerEvents } from './call-peer.ts';
import { mediaStats } from '../media-stats.ts';
import type { MediaWorkerData, WorkerCommand, WorkerEvent } from './media-worker-protocol.ts';
import { MEDIA_RATE } from './opus.ts';
import { OpusFrameEncoder } from './opus-encoder.ts';
import { PACKET_BURST_MS } from './packet-pacer.ts';

type PriorityEvent = Extract<WorkerEvent, { t: 'priority' }>;

const ENTRY = new URL('./media-worker-entry.mjs', import.meta.url);

/** A worker's stats batch, handed to this thread's media hooks as if measured here. */
function relayStats(event: Extract<WorkerEvent, { t: 'stats' }>): void {
  const hooks = mediaStats();
  for (const ms of event.rtpLate) hooks.rtpLate(ms);
  for (const ms of event.gc) hooks.workerGc(ms);
  for (const ms of event.jitter) hooks.uplinkJitter(ms);
  for (let i = 0; i < event.lost; i += 1) hooks.uplinkLost();
}

/**
 * One media worker thread and the calls on it. Commands queue in an outbox flushed once per
 * microtask checkpoint, so everything one pacer tick sends to this worker is one message.
 */
class MediaWorker {
  private readonly worker: Worker;
  private readonly peers = new Map<number, WorkerPeer>();
  private outbox: WorkerCommand[] = [];
  private dead = false;
  private statsWaiters: Array<() => void> = [];

  constructor(
    nice: number,
    private readonly onDead: (worker: MediaWorker) => void,
    private readonly onPriority: (event: PriorityEvent) => void,
  ) {
    this.worker = new Worker(ENTRY, { execArgv: [], stdout: false, stderr: false, workerData: { nice } satisfies MediaWorkerData });
    // Idle workers never keep the process alive; calls are held by the server's sockets.
    this.worker.unref();
    this.worker.on('message', (event: WorkerEvent) => this.onEvent(event));
    this.worker.on('error', () => this.die());
    this.worker.on('exit', () => this.die());
  }

  get load(): number {
    return this.dead ? Number.POSITIVE_INFINITY : this.peers.size;
  }

  attach(peer: WorkerPeer, config: CallPeerConfig): void {
    this.peers.set(peer.id, peer);
    this.send({ t: 'open', id: peer.id, config });
  }

  detach(id: number): void {
    this.peers.delete(id);
  }

  send(command: WorkerCommand): void {
    if (this.dead) return;
    if (this.outbox.length === 0) queueMicrotask(() => this.flush());
    this.outbox.push(command);
  }

  private flush(): void {
    const commands = this.outbox;
    this.outbox = [];
    if (!this.dead && commands.length > 0) this.worker.postMessage(commands);
  }

  /** Resolves once the worker's media stats so far have reached this thread's hooks. */
  flushStats(): Promise<void> {
    if (this.dead) return Promise.resolve();
    return new Promise((resolve) => {
      this.statsWaiters.push(resolve);
      this.send({ t: 'stats' });
    });
  }

  private onEvent(event: WorkerEvent): void {
    if (event.t === 'priority') {
      this.onPriority(event);
      return;
    }
    if (event.t === 'stats') {
      relayStats(event);
      if (event.asked) this.statsWaiters.shift()?.();
      return;
    }
    if (event.t === 'audio') {
      let offset = 0;
      for (let i = 0; i < event.ids.length; i += 1) {
        const length = event.lengths[i]!;
        // A copy per call: the session keeps frames it is given (pre-roll, the open utterance),
        // and a view would hold every call's audio in the batch alive with it.
        this.peers.get(event.ids[i]!)?.events.onAudio(event.pcm.slice(offset, offset + length));
        offset += length;
      }
      return;
    }
    this.peers.get(event.id)?.onEvent(event);
  }

  private die(): void {
    if (this.dead) return;
    this.dead = true;
    this.onDead(this);
    for (const waiter of this.statsWaiters.splice(0)) waiter();
    const peers = [...this.peers.values()];
    this.peers.clear();
    for (const peer of peers) peer.workerDied();
  }
}

/**
 * Frames reach a worker this far ahead of their play time; the worker sends the first 60 ms of a
 * talk spurt at once (PACKET_BURST_MS) and paces the rest, so 140 ms of main-thread lateness is
 * absorbed. At 100 ms (40 absorbed), with the media thread ahead of the main thread on one busy
 * core, one packet in twenty reached the worker after its slot. Audio held this way is not
 * counted as sent (sendAheadMs) and is dropped on barge-in, so neither the heard text nor the
 * interruption gets later.
 */
export const WORKER_DOWNLINK_LEAD_MS = 200;

/** A call whose peer connection runs in a media worker; encoding stays here (opus-encoder.ts). */
export class WorkerPeer implements CallPeer {
  readonly downlinkLeadMs = WORKER_DOWNLINK_LEAD_MS;
  readonly sendAheadMs = PACKET_BURST_MS;
  private readonly encoder = new OpusFrameEncoder(MEDIA_RATE);
  private pendingAnswer: { resolve(sdp: string): void; reject(error: Error): void } | undefined;
  private open = false;
  private closed = false;

  constructor(
    private readonly host: MediaWorker,
    readonly id: number,
    readonly events: CallPeerEvents,
  ) {}

  get controlOpen(): boolean {
    return this.open && !this.closed;
  }

  answer(sdp: string): Promise<string> {
    return new Promise((resolve, reject) => {
      this.pendingAnswer = { resolve, reject };
      this.host.send({ t: 'answer', id: this.id, sdp });
    });
  }

  sendFrame(frame: Int16Array): void {
    if (this.closed) return;
    this.host.send({ t: 'packet', id: this.id, packet: this.encoder.encode(frame) });
  }

  discardAudio(): void {
    if (!this.closed) this.host.send({ t: 'discard', id: this.id });
  }

  pauseAudio(): void {
    if (!this.closed) this.host.send({ t: 'pause', id: this.id });
  }

  resumeAudio(): void {
    if (!this.closed) this.host.send({ t: 'resume', id: this.id });
  }

  sendControl(text: string): boolean {
    if (!this.controlOpen) return false;
    this.host.send({ t: 'control', id: this.id, text });
    return true;
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.host.send({ t: 'close', id: this.id });
      this.host.detach(this.id);
      this.pendingAnswer?.reject(new Error('the call closed before its answer'));
      this.pendingAnswer = undefined;
    }
    return Promise.resolve();
  }

  onEvent(event: Exclude<WorkerEvent, { t: 'audio' } | { t: 'stats' }>): void {
    switch (event.t) {
      case 'answered':
        this.pendingAnswer?.resolve(event.sdp);
        this.pendingAnswer = undefined;
        return;
      case 'answer-failed':
        this.pendingAnswer?.reject(event.offerError ? new OfferError(event.message) : new Error(event.message));
        this.pendingAnswer = undefined;
        return;
      case 'control':
        if (!this.closed) this.events.onControl(event.text);
        return;
      case 'control-open':
        this.open = true;
        this.events.onControlOpen();
        return;
      case 'control-closed':
        this.open = false;
        return;
      case 'connected':
        if (!this.closed) this.events.onConnected();
        return;
      case 'gone':
        this.goneNow();
        return;
    }
  }

  /** The worker thread itself failed: every call on it is gone. */
  workerDied(): void {
    this.pendingAnswer?.reject(new Error('the media worker stopped'));
    this.pendingAnswer = undefined;
    this.goneNow();
  }

  private goneNow(): void {
    if (this.closed) return;
    this.closed = true;
    this.host.detach(this.id);
    this.events.onGone();
  }
}

/**
 * Media worker threads for WebRTC calls, started on first use and kept for the life of the
 * process (unref'd); a new call goes to the worker carrying the fewest. A worker that dies is
 * replaced for new calls; its calls end as gone (resumable like any dropped call).
 */
export class MediaWorkerPool {
  private readonly workers: MediaWorker[] = [];
  private nextId = 1;
  private priorityNoted = false;
  /** Told once if a worker could not take its priority (see media-worker.ts). */
  onPriorityRefused: ((reason: string) => void) | undefined;

  /** `nice`: the worker threads' priority (Linux nice value; 0 leaves them as the process). */
  constructor(
    readonly size: number,
    readonly nice = 0,
  ) {}

  createPeer(options: CallPeerConfig & CallPeerEvents): WorkerPeer {
    const { iceServers, additionalHostAddresses, portRange, loopbackOnly, ...events } = options;
    const host = this.pick();
    const peer = new WorkerPeer(host, this.nextId++, events);
    host.attach(peer, { iceServers, additionalHostAddresses, portRange, ...(loopbackOnly === undefined ? {} : { loopbackOnly }) });
    return peer;
  }

  /** Resolves once every running worker's media stats so far have reached the hooks (a scrape, a benchmark window). */
  async flushStats(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.flushStats()));
  }

  private pick(): MediaWorker {
    while (this.workers.length < this.size) this.workers.push(new MediaWorker(this.nice, (w) => this.remove(w), (event) => this.onPriority(event)));
    return this.workers.reduce((best, w) => (w.load < best.load ? w : best));
  }

  private onPriority(event: PriorityEvent): void {
    if (event.applied || this.priorityNoted) return;
    this.priorityNoted = true;
    this.onPriorityRefused?.(`media worker threads run at the process's priority, not nice ${event.nice}: ${event.reason ?? 'refused'}`);
  }

  private remove(worker: MediaWorker): void {
    const i = this.workers.indexOf(worker);
    if (i >= 0) this.workers.splice(i, 1);
  }
}

const pools = new Map<string, MediaWorkerPool>();

/** Every pool of the process (at most one per configured size). */
export function mediaWorkerPools(): MediaWorkerPool[] {
  return [...pools.values()];
}

/** One pool per size and priority for the whole process (test servers come and go; workers stay). */
export function mediaWorkerPool(size: number, nice = 0): MediaWorkerPool {
  const key = `${size}/${nice}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new MediaWorkerPool(size, nice);
    pools.set(key, pool);
  }
  return pool;
}

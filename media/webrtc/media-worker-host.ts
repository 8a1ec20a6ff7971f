import { Worker } from 'node:worker_threads';
import type { CallPeerConfig, CallPeerEvents } from './call-peer.ts';
import { mediaStats } from '../media-stats.ts';
import type { MediaWorkerData, WorkerCommand, WorkerEvent } from './media-worker-protocol.ts';

export type PriorityEvent = Extract<WorkerEvent, { t: 'priority' }>;
export type ReadyEvent = Extract<WorkerEvent, { t: 'ready' }>;
export type PeerEvent = Exclude<WorkerEvent, { t: 'audio' } | { t: 'stats' } | { t: 'priority' } | { t: 'ready' }>;

// Compiled (the installed package), the worker module runs as it is; from the TypeScript sources a
// small entry registers the TypeScript loader first.
export const MEDIA_WORKER_ENTRY = import.meta.url.endsWith('.ts') ? new URL('./media-worker-entry.mjs', import.meta.url) : new URL('./media-worker.js', import.meta.url);

/** What a worker needs of a call it carries (worker-peer.ts's WorkerPeer). */
export interface HostedPeer {
  readonly id: number;
  readonly events: Pick<CallPeerEvents, 'onAudio'>;
  onEvent(event: PeerEvent): void;
  workerDied(): void;
}

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
 * Commands sent before the worker is ready wait in its port: a call put on a starting worker
 * works, it only waits for the start.
 */
export class MediaWorker {
  private readonly worker: Worker;
  private readonly peers = new Map<number, HostedPeer>();
  private outbox: WorkerCommand[] = [];
  private dead = false;
  private statsWaiters: Array<() => void> = [];
  private readonly startedAt = performance.now();
  /** performance.now() when the worker said it had loaded everything (werift, Opus); undefined until then. */
  readyAt: number | undefined;
  /** How long its warm-up call took (ms), once ready after one that succeeded. */
  warmCallMs: number | undefined;
  private failure: Error | undefined;
  private startWaiters: Array<{ resolve(): void; reject(error: Error): void }> = [];

  constructor(
    data: MediaWorkerData,
    entry: URL,
    private readonly onDead: (worker: MediaWorker) => void,
    private readonly onNotice: (event: PriorityEvent | ReadyEvent) => void,
  ) {
    this.worker = new Worker(entry, { execArgv: [], stdout: false, stderr: false, workerData: data });
    this.worker.on('message', (event: WorkerEvent) => this.onEvent(event));
    this.worker.on('error', (error) => this.die(error));
    this.worker.on('exit', (code) => this.die(new Error(`the thread exited (code ${code})`)));
    // Idle workers never keep the process alive; calls are held by the server's sockets. After
    // the listeners: a 'message' listener added later refs the worker again (Node 20).
    this.worker.unref();
  }

  get load(): number {
    return this.dead ? Number.POSITIVE_INFINITY : this.peers.size;
  }

  /** From the thread's creation to its ready message, ms. */
  get startMs(): number | undefined {
    return this.readyAt === undefined ? undefined : this.readyAt - this.startedAt;
  }

  /** Resolves once the worker has loaded its modules; rejects with why it stopped before that. */
  whenReady(): Promise<void> {
    if (this.readyAt !== undefined) return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.startWaiters.push({ resolve, reject }));
  }

  attach(peer: HostedPeer, config: CallPeerConfig): void {
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
    switch (event.t) {
      case 'ready':
        this.readyAt = performance.now();
        this.warmCallMs = event.warmCallMs;
        this.onNotice(event);
        for (const waiter of this.startWaiters.splice(0)) waiter.resolve();
        return;
      case 'priority':
        return this.onNotice(event);
      case 'stats':
        relayStats(event);
        if (event.asked) this.statsWaiters.shift()?.();
        return;
      case 'audio': {
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
      default:
        this.peers.get(event.id)?.onEvent(event);
    }
  }

  private die(error: Error): void {
    if (this.dead) return;
    this.dead = true;
    if (this.readyAt === undefined) {
      this.failure = error;
      for (const waiter of this.startWaiters.splice(0)) waiter.reject(error);
    }
    this.onDead(this);
    for (const waiter of this.statsWaiters.splice(0)) waiter();
    const peers = [...this.peers.values()];
    this.peers.clear();
    for (const peer of peers) peer.workerDied();
  }
}

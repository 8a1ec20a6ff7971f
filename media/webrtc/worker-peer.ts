import { OfferError, type CallPeer, type CallPeerConfig, type CallPeerEvents } from './call-peer.ts';
import { MEDIA_WORKER_ENTRY, MediaWorker, type HostedPeer, type PeerEvent, type PriorityEvent, type ReadyEvent } from './media-worker-host.ts';
import { MEDIA_RATE } from './opus.ts';
import { OpusFrameEncoder } from './opus-encoder.ts';
import { PACKET_BURST_MS } from './packet-pacer.ts';

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
export class WorkerPeer implements CallPeer, HostedPeer {
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

  onEvent(event: PeerEvent): void {
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

/** Media workers did not all get ready: one stopped before it was (`timedOut` false), or the wait ran out. */
export class MediaWorkerStartError extends Error {
  override name = 'MediaWorkerStartError';
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

export type ReplacementOutcome = { ok: true; startMs: number } | { ok: false; reason: string };

/**
 * Media worker threads for WebRTC calls, kept for the life of the process (unref'd); a new call
 * goes to the ready worker carrying the fewest. Started on first use, or all at once by warm()
 * (the server does so before it listens, so no call waits for a thread to load werift and Opus).
 * A worker that dies takes its calls with it (gone, resumable like any dropped call); after
 * warm() a new one starts at once, else at the next call.
 */
export class MediaWorkerPool {
  private readonly workers: MediaWorker[] = [];
  private nextId = 1;
  private priorityNoted = false;
  private warmCallNoted = false;
  private keepWarm = false;
  /** Told once if a worker could not take its priority (see media-worker.ts). */
  onPriorityRefused: ((reason: string) => void) | undefined;
  /** Told once if a worker's warm-up call failed (it is ready all the same; see warm-call.ts). */
  onWarmCallFailed: ((reason: string) => void) | undefined;
  /** After warm(): told when a dead worker's replacement is ready, or why it could not start (the next call starts another). */
  onReplaced: ((outcome: ReplacementOutcome) => void) | undefined;

  /**
   * `nice`: the worker threads' priority (Linux nice value; 0 leaves them as the process).
   * `warmCallTimeoutMs`: each worker calls itself before it says ready, within this bound (0: no
   * such call). `entry`: the worker module.
   */
  constructor(
    readonly size: number,
    readonly nice = 0,
    readonly warmCallTimeoutMs = 0,
    private readonly entry = MEDIA_WORKER_ENTRY,
  ) {}

  /** Workers that have loaded their modules. */
  get ready(): number {
    return this.workers.filter((w) => w.readyAt !== undefined).length;
  }

  /** The longest warm-up call of the ready workers (ms), undefined when none made one. */
  get warmCallMs(): number | undefined {
    const calls = this.workers.flatMap((w) => (w.warmCallMs === undefined ? [] : [w.warmCallMs]));
    return calls.length > 0 ? Math.max(...calls) : undefined;
  }

  /**
   * Starts every worker not running yet and resolves, with the slowest one's start in ms, once
   * each has loaded its modules. Rejects with MediaWorkerStartError when one stops before that
   * or when they are not all ready within `timeoutMs` (those still starting go on).
   */
  async warm(timeoutMs: number): Promise<number> {
    this.keepWarm = true;
    this.fill();
    const starting = [...this.workers];
    const all = Promise.all(
      starting.map((w) => w.whenReady().catch((error: Error) => Promise.reject(new MediaWorkerStartError(`a media worker thread stopped before it was ready: ${error.message}`, false)))),
    );
    // Referenced on purpose: the workers are unref'd, and a start awaiting them must not let the process exit.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new MediaWorkerStartError(`media workers not ready within ${timeoutMs} ms (${this.ready} of ${this.size})`, true)), timeoutMs);
    });
    try {
      await Promise.race([all, late]);
    } finally {
      clearTimeout(timer);
    }
    return Math.max(...starting.map((w) => w.startMs ?? 0));
  }

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

  private fill(): void {
    while (this.workers.length < this.size) this.start();
  }

  private start(): MediaWorker {
    const worker = new MediaWorker({ nice: this.nice, warmCallTimeoutMs: this.warmCallTimeoutMs }, this.entry, (w) => this.remove(w), (event) => this.onNotice(event));
    this.workers.push(worker);
    return worker;
  }

  /** A starting worker takes a call only when none is ready: the call would wait for its start. */
  private pick(): MediaWorker {
    this.fill();
    const ready = this.workers.filter((w) => w.readyAt !== undefined);
    return (ready.length > 0 ? ready : this.workers).reduce((best, w) => (w.load < best.load ? w : best));
  }

  private onNotice(event: PriorityEvent | ReadyEvent): void {
    if (event.t === 'ready') {
      if (event.warmCallFailed === undefined || this.warmCallNoted) return;
      this.warmCallNoted = true;
      this.onWarmCallFailed?.(event.warmCallFailed);
      return;
    }
    if (event.applied || this.priorityNoted) return;
    this.priorityNoted = true;
    this.onPriorityRefused?.(`media worker threads run at the process's priority, not nice ${event.nice}: ${event.reason ?? 'refused'}`);
  }

  /** Only a worker that had got ready is replaced at once: one failing its start would fail again and again. */
  private remove(worker: MediaWorker): void {
    const i = this.workers.indexOf(worker);
    if (i >= 0) this.workers.splice(i, 1);
    if (!this.keepWarm || worker.readyAt === undefined) return;
    const next = this.start();
    next.whenReady().then(
      () => this.onReplaced?.({ ok: true, startMs: next.startMs! }),
      (error: Error) => this.onReplaced?.({ ok: false, reason: error.message }),
    );
  }
}

const pools = new Map<string, MediaWorkerPool>();

/** Every pool of the process (at most one per configured size). */
export function mediaWorkerPools(): MediaWorkerPool[] {
  return [...pools.values()];
}

/** One pool per size, priority and warm-up call for the whole process (test servers come and go; workers stay). */
export function mediaWorkerPool(size: number, nice = 0, warmCallTimeoutMs = 0): MediaWorkerPool {
  const key = `${size}/${nice}/${warmCallTimeoutMs}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new MediaWorkerPool(size, nice, warmCallTimeoutMs);
    pools.set(key, pool);
  }
  return pool;
}

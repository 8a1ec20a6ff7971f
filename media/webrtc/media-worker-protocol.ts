import type { CallPeerConfig } from './call-peer.ts';

/**
 * What crosses between the main thread and a media worker (worker-peer.ts ↔ media-worker.ts).
 * Commands to a worker travel in order in one array per event-loop turn, so a tick's downlink
 * packets for every call on that worker cost one message, and `bye` still precedes `close`.
 */
/** Given to each worker at start (workerData). */
export interface MediaWorkerData {
  /** The nice value the worker thread asks for (0: unchanged). */
  nice: number;
  /** The bound of the loopback call the worker makes before it says ready (warm-call.ts); 0: none. */
  warmCallTimeoutMs: number;
}

export type WorkerCommand =
  | { t: 'open'; id: number; config: CallPeerConfig }
  | { t: 'answer'; id: number; sdp: string }
  /** A downlink packet for the worker to send at its 20 ms slot. */
  | { t: 'packet'; id: number; packet: Uint8Array }
  /** Barge-in: packets not sent yet are dropped. */
  | { t: 'discard'; id: number }
  /** A possible barge-in: packets not sent yet are held, then resumed or discarded. */
  | { t: 'pause'; id: number }
  | { t: 'resume'; id: number }
  /** Send the media stats gathered so far now (a scrape, a benchmark window's end). */
  | { t: 'stats' }
  | { t: 'control'; id: number; text: string }
  | { t: 'close'; id: number };

export type WorkerEvent =
  | { t: 'answered'; id: number; sdp: string }
  | { t: 'answer-failed'; id: number; offerError: boolean; message: string }
  /**
   * Decoded uplink frames of every call on the worker since the last batch, in arrival order:
   * frame i belongs to call ids[i] and is the next lengths[i] samples of pcm (transferred).
   */
  | { t: 'audio'; ids: Int32Array; lengths: Int32Array; pcm: Int16Array }
  | { t: 'control'; id: number; text: string }
  | { t: 'control-open'; id: number }
  | { t: 'control-closed'; id: number }
  | { t: 'connected'; id: number }
  | { t: 'gone'; id: number }
  /**
   * The worker's media stats since its last report (media-stats.ts), sent about once a second and
   * when asked: each paced packet's lateness, each GC pause and each call's uplink jitter report
   * (ms), and the uplink packets lost. Buffers are transferred. `asked`: the answer to a `stats`
   * command (the others are the periodic ones).
   */
  | { t: 'stats'; asked: boolean; rtpLate: Float64Array; gc: Float64Array; jitter: Float64Array; lost: number }
  /**
   * The worker has loaded everything a call needs (werift, Opus) and takes calls without delay
   * (sent once). With a warm-up call: how long it took, or why it failed (the worker is ready anyway).
   */
  | { t: 'ready'; warmCallMs?: number; warmCallFailed?: string }
  /** Whether the worker thread got the priority it asked for (sent once, at start). */
  | { t: 'priority'; nice: number; applied: boolean; reason?: string };

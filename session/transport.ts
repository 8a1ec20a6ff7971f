import type { ServerFrame } from './protocol/server.ts';

/**
 * What the session core needs from a transport (WebSocket or WebRTC). The core owns no socket:
 * it hands frames and audio to this port and asks it to close.
 */
export interface Transport {
  /** Control and event frames; never dropped for backpressure. */
  sendFrame(frame: ServerFrame): void;
  /** Encoded downlink audio in the session's output format; may be dropped when the peer lags. */
  sendAudio(bytes: Uint8Array): void;
  /** Ends the connection with a WebSocket close code and a short reason. */
  close(code: number, reason: string): void;
  /**
   * How far ahead of real time the session's pacer hands audio over (default 60 ms). A transport
   * that paces on its own (WebRTC through a media worker) asks for more, so a stalled main event
   * loop does not starve its queue.
   */
  readonly downlinkLeadMs?: number;
  /**
   * Set by a transport that holds audio and sends it at its own pace: how far ahead of its play
   * time a frame leaves. Audio handed over further ahead is still held (and dropped on barge-in),
   * so it does not count as sent. Unset: everything handed over is sent at once.
   */
  readonly sendAheadMs?: number;
  /** Drops audio handed over but not yet sent (barge-in): it must not reach the listener. */
  discardAudio?(): void;
  /** How late (ms) the session's pacer handed each steady-state audio frame over, against its slot. */
  pacedLate?(ms: number): void;
  /** Holds audio handed over but not yet sent (a possible barge-in) until resumeAudio or discardAudio. */
  pauseAudio?(): void;
  resumeAudio?(): void;
}

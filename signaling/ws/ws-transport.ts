import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import type { Config } from '../config.ts';
import type { WsErrorCode } from '../../session/protocol/errors.ts';
import type { ServerFrame } from '../../session/protocol/server.ts';
import type { Transport } from '../../session/transport.ts';
import type { FineHistogram } from '../observability/fine-histogram.ts';

/**
 * The session core's Transport over one `ws` socket, with backpressure: when the peer stops
 * reading, audio is dropped first (past AUDIO_BACKLOG_BYTES unsent), control frames are always
 * queued, and a peer still over SEND_BACKLOG_LIMIT_BYTES after SLOW_CONSUMER_MS is closed as a
 * slow consumer (resumable, like any drop).
 */
export class WebSocketTransport implements Transport {
  private behindSince: number | undefined;
  private corked = false;
  /** The turn whose first text_delta was flushed at once. */
  private firstTextOf: string | undefined;
  private reported = false;
  private recheck: NodeJS.Timeout | undefined;

  /**
   * `socket` is the one the HTTP server handed to the upgrade, which ws.handleUpgrade writes
   * every frame into (ws-transport.test.ts checks that corking it batches ws's writes).
   */
  constructor(
    private readonly ws: WebSocket,
    private readonly socket: Duplex,
    private readonly limits: Pick<Config, 'AUDIO_BACKLOG_BYTES' | 'SEND_BACKLOG_LIMIT_BYTES' | 'SLOW_CONSUMER_MS'>,
    private readonly onSlowConsumer: (code: WsErrorCode, detail: string) => void,
    private readonly metrics: { errorSent(code: string): void; lateness?: FineHistogram },
  ) {}

  pacedLate(ms: number): void {
    this.metrics.lateness?.record(ms);
  }

  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  sendFrame(frame: ServerFrame): void {
    if (!this.open) return;
    if (frame.type === 'error') this.metrics.errorSent(frame.code);
    this.batch();
    this.ws.send(JSON.stringify(frame));
    // A reply's first text is what the user waits for: it leaves now. When a whole answer came
    // in one read, the rest of the tick is the other deltas, done and the turn's bookkeeping
    // (measured: 0.3-0.7 ms held behind them); those still leave together at the tick's end.
    if (frame.type === 'text_delta' && frame.turn_id !== this.firstTextOf) {
      this.firstTextOf = frame.turn_id;
      this.flush();
    }
    this.checkBacklog();
  }

  /**
   * Frames produced in one tick (a turn's asr, turn, deltas…) leave in one write: the socket is
   * corked until the tick's work is done. Profiling showed one writev per frame dominating.
   */
  private batch(): void {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    process.nextTick(this.flushTick);
  }

  private readonly flushTick = (): void => this.flush();

  /** Sends what is batched now (a no-op when nothing is). */
  private flush(): void {
    if (!this.corked) return;
    this.corked = false;
    this.socket.uncork();
  }

  sendAudio(bytes: Uint8Array): void {
    if (!this.open) return;
    if (this.ws.bufferedAmount > this.limits.AUDIO_BACKLOG_BYTES) {
      this.checkBacklog();
      return;
    }
    this.ws.send(bytes, { binary: true });
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === this.ws.CONNECTING || this.open) this.ws.close(code, reason);
  }

  /**
   * Called on every send and every received frame, and again SLOW_CONSUMER_MS after the client
   * fell behind: a client that floods, stops reading and goes quiet is found by this timer, not
   * left to the heartbeat.
   */
  checkBacklog(): void {
    if (this.ws.bufferedAmount <= this.limits.SEND_BACKLOG_LIMIT_BYTES) {
      this.behindSince = undefined;
      return;
    }
    const now = Date.now();
    this.behindSince ??= now;
    const behindFor = now - this.behindSince;
    if (!this.reported && behindFor < this.limits.SLOW_CONSUMER_MS && !this.recheck) {
      this.recheck = setTimeout(() => {
        this.recheck = undefined;
        this.checkBacklog();
      }, this.limits.SLOW_CONSUMER_MS - behindFor + 1);
      this.recheck.unref();
    }
    if (!this.reported && behindFor >= this.limits.SLOW_CONSUMER_MS) {
      this.reported = true;
      const detail = `the client fell ${this.ws.bufferedAmount} bytes behind for over ${this.limits.SLOW_CONSUMER_MS} ms`;
      // Never from inside a send: the session may be in the middle of emitting a turn.
      setImmediate(() => this.onSlowConsumer('slow_consumer', detail));
    }
  }
}

/** An incoming message's bytes as one Buffer, whatever shape ws delivered it in. */
export function messageBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

import { performance } from 'node:perf_hooks';
import WebSocket, { type RawData } from 'ws';

/**
 * A lean text-session client for load generation. Unlike signaling/testing/ws-test-client.ts it
 * validates nothing and JSON-parses almost nothing: it reads a frame's type from the prefix the
 * server's JSON.stringify produces, so the client's own cost stays small next to the server's.
 */
export class BenchSession {
  private waiter:
    | { kind: 'text' | 'voice'; sentAt: number; firstAt?: number; ok: (latencyMs: number) => void; fail: (e: Error) => void; timer: NodeJS.Timeout }
    | undefined;
  private readyWaiter: { ok: () => void; fail: (e: Error) => void } | undefined;
  private closed = false;
  private voiceFlip = false;
  /** The token of the ready frame (parsed once per connection). */
  resumeToken = '';
  /** The last text turn's input_text → done, in ms. */
  lastTurnMs = 0;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', (code, reason) => {
      this.closed = true;
      this.failAll(new Error(`socket closed (${code} ${String(reason)})`));
    });
    ws.on('error', (err) => this.failAll(err));
  }

  /**
   * Opens a socket, sends a text-modality start frame with greeting:false (resuming with
   * `resumeToken` when given), waits for ready.
   */
  static async open(wsUrl: string, apiKey: string, sessionId: string, timeoutMs = 15000, resumeToken?: string): Promise<BenchSession> {
    const ws = new WebSocket(wsUrl, { perMessageDeflate: false, skipUTF8Validation: true });
    const session = new BenchSession(ws);
    await withTimeout(
      new Promise<void>((ok, fail) => {
        session.readyWaiter = { ok, fail };
        ws.once('open', () =>
          ws.send(JSON.stringify({ type: 'start', session_id: sessionId, api_key: apiKey, mode: { kind: 'service', modality: 'text', greeting: false }, ...(resumeToken ? { resume_token: resumeToken } : {}) })),
        );
        ws.once('unexpected-response', (_req, res) => fail(new Error(`handshake refused: ${res.statusCode}`)));
      }),
      timeoutMs,
      `ready for ${sessionId}`,
    ).catch((error: unknown) => {
      ws.terminate();
      throw error;
    });
    return session;
  }

  /**
   * Sends input_text; resolves with ms from just before ws.send to receipt of the turn's first
   * text_delta, once the turn's done has arrived (so the next request never cuts in).
   */
  text(text: string, timeoutMs = 15000): Promise<number> {
    return this.request('text', JSON.stringify({ type: 'input_text', text }), timeoutMs);
  }

  /** Sends set_voice (alternating two voices); resolves with the RTT to the voice frame. */
  setVoice(timeoutMs = 15000): Promise<number> {
    this.voiceFlip = !this.voiceFlip;
    return this.request('voice', JSON.stringify({ type: 'set_voice', voice: this.voiceFlip ? 'rms' : 'slt' }), timeoutMs);
  }

  /** Starts the conversation over (history cleared); with greeting:false nothing is answered. */
  reset(): void {
    this.ws.send('{"type":"reset"}');
  }

  /** An abnormal drop, as a lost network causes it: no close handshake. */
  drop(): void {
    this.ws.terminate();
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(() => {
        this.ws.terminate();
        done();
      }, 2000);
      this.ws.once('close', () => {
        clearTimeout(timer);
        done();
      });
      this.ws.close(1000);
    });
  }

  private request(kind: 'text' | 'voice', payload: string, timeoutMs: number): Promise<number> {
    if (this.waiter) return Promise.reject(new Error('a request is already in flight on this session'));
    if (this.closed) return Promise.reject(new Error('socket closed'));
    return new Promise((ok, fail) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        fail(new Error(`no ${kind === 'text' ? 'text_delta/done' : 'voice'} frame within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = { kind, sentAt: performance.now(), ok, fail, timer };
      this.ws.send(payload);
    });
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    const now = performance.now();
    if (isBinary) return;
    const raw = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
    const type = frameType(raw);
    const w = this.waiter;
    switch (type) {
      case 'text_delta':
        if (w?.kind === 'text' && w.firstAt === undefined) w.firstAt = now;
        return;
      case 'done':
        if (w?.kind === 'text') {
          this.waiter = undefined;
          clearTimeout(w.timer);
          this.lastTurnMs = now - w.sentAt;
          if (w.firstAt === undefined) w.fail(new Error('turn ended without a text_delta'));
          else w.ok(w.firstAt - w.sentAt);
        }
        return;
      case 'voice':
        if (w?.kind === 'voice') {
          this.waiter = undefined;
          clearTimeout(w.timer);
          w.ok(now - w.sentAt);
        }
        return;
      case 'ready':
        this.resumeToken = String((JSON.parse(raw.toString('utf8')) as { resume_token?: unknown }).resume_token ?? '');
        this.readyWaiter?.ok();
        this.readyWaiter = undefined;
        return;
      case 'error':
        this.failAll(new Error(`server error frame: ${raw.toString('utf8')}`));
        return;
      default:
        return;
    }
  }

  private failAll(error: Error): void {
    const w = this.waiter;
    this.waiter = undefined;
    if (w) {
      clearTimeout(w.timer);
      w.fail(error);
    }
    this.readyWaiter?.fail(error);
    this.readyWaiter = undefined;
  }
}

const PREFIX = Buffer.from('{"type":"');

/** The `type` of a server frame; falls back to JSON.parse if `type` is not the first key. */
function frameType(raw: Buffer): string | undefined {
  if (raw.subarray(0, PREFIX.length).equals(PREFIX)) {
    const end = raw.indexOf(0x22, PREFIX.length);
    if (end > 0) return raw.toString('latin1', PREFIX.length, end);
  }
  try {
    const parsed = JSON.parse(raw.toString('utf8')) as { type?: unknown };
    return typeof parsed.type === 'string' ? parsed.type : undefined;
  } catch {
    return undefined;
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    }),
  ]);
}

/** Opens `count` sessions, `batch` handshakes at a time (no SYN flood on loopback). */
export async function openSessions(wsUrl: string, apiKey: string, count: number, prefix: string, batch = 50): Promise<BenchSession[]> {
  const sessions: BenchSession[] = [];
  try {
    for (let i = 0; i < count; i += batch) {
      const n = Math.min(batch, count - i);
      const settled = await Promise.allSettled(Array.from({ length: n }, (_, j) => BenchSession.open(wsUrl, apiKey, `${prefix}-${i + j}`)));
      for (const r of settled) if (r.status === 'fulfilled') sessions.push(r.value);
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
  } catch (error) {
    await closeSessions(sessions);
    throw error;
  }
  return sessions;
}

export async function closeSessions(sessions: readonly BenchSession[]): Promise<void> {
  await Promise.all(sessions.map((s) => s.close()));
}

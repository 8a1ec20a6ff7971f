import WebSocket, { type ClientOptions } from 'ws';
import { ServerFrame } from '../../session/protocol/server.ts';

type Frame = ServerFrame;
type FrameOf<T extends Frame['type']> = Extract<Frame, { type: T }>;

/**
 * A Node WebSocket client for integration tests. Every JSON frame the server sends is checked
 * against SPEC's server schemas (closed frames reject extra fields); a violation is recorded and
 * `assertProtocol()` fails the test with it.
 */
export class WsTestClient {
  readonly frames: Frame[] = [];
  /** performance.now() when each of `frames` arrived. */
  readonly arrivals: number[] = [];
  readonly audio: Buffer[] = [];
  /** performance.now() when each of `audio` arrived. */
  readonly audioArrivals: number[] = [];
  readonly violations: string[] = [];
  closed: { code: number; reason: string } | undefined;
  private waiters: Array<() => void> = [];
  private readonly closedPromise: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const at = performance.now();
      if (isBinary) {
        this.audio.push(data as Buffer);
        this.audioArrivals.push(at);
      } else {
        const raw: unknown = JSON.parse(String(data));
        const parsed = ServerFrame.safeParse(raw);
        if (!parsed.success) this.violations.push(`${JSON.stringify(raw)}: ${parsed.error.message}`);
        this.frames.push(raw as Frame);
        this.arrivals.push(at);
      }
      this.wake();
    });
    this.closedPromise = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        this.closed = { code, reason: String(reason) };
        this.wake();
        resolve(this.closed);
      }),
    );
  }

  /** `options`: more ws client options, e.g. `ca` for a wss:// server with a test certificate. */
  static async open(url: string, headers: Record<string, string> = {}, options: ClientOptions = {}): Promise<WsTestClient> {
    const ws = new WebSocket(url, { ...options, headers });
    const client = new WsTestClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake refused: ${res.statusCode}`)));
    });
    return client;
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  sendBinary(bytes: Uint8Array): void {
    this.ws.send(bytes, { binary: true });
  }

  /** Resolves with the first frame (from `after` on) that matches; rejects after `timeoutMs`. */
  async waitFor<T extends Frame['type']>(
    type: T,
    predicate: (frame: FrameOf<T>) => boolean = () => true,
    timeoutMs = 5000,
    after = 0,
  ): Promise<FrameOf<T>> {
    const find = (): FrameOf<T> | undefined =>
      this.frames.slice(after).find((f): f is FrameOf<T> => f.type === type && predicate(f as FrameOf<T>));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found) return found;
      if (this.closed) throw new Error(`socket closed (${this.closed.code} ${this.closed.reason}) before ${type}; frames: ${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${type}; frames: ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  waitClose(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    return Promise.race([
      this.closedPromise,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`socket did not close; frames: ${this.describe()}`)), timeoutMs)),
    ]);
  }

  /** When `frame` (one of `frames`) arrived. */
  arrivalOf(frame: Frame): number {
    const i = this.frames.indexOf(frame);
    if (i < 0) throw new Error('not a frame of this client');
    return this.arrivals[i]!;
  }

  /** Frames of one type, in arrival order. */
  all<T extends Frame['type']>(type: T): FrameOf<T>[] {
    return this.frames.filter((f): f is FrameOf<T> => f.type === type);
  }

  /** Types of the frames that carry this turn id, in order. */
  turnTypes(turnId: string): string[] {
    return this.frames.filter((f) => 'turn_id' in f && f.turn_id === turnId).map((f) => f.type);
  }

  assertProtocol(): void {
    if (this.violations.length > 0) throw new Error(`protocol violations:\n${this.violations.join('\n')}`);
  }

  close(): void {
    this.ws.close(1000);
  }

  private describe(): string {
    return this.frames.map((f) => f.type).join(',');
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** Opens a socket, sends a start frame and waits for ready. */
export async function startSession(
  wsUrl: string,
  start: Record<string, unknown>,
  headers: Record<string, string> = {},
  options: ClientOptions = {},
): Promise<{ client: WsTestClient; ready: FrameOf<'ready'> }> {
  const client = await WsTestClient.open(wsUrl, headers, options);
  client.send({ type: 'start', ...start });
  const ready = await client.waitFor('ready');
  return { client, ready };
}

import WebSocket, { type ClientOptions } from 'ws';
import { FrameLog, type FrameOf } from '../../session/testing/frame-log.ts';

/**
 * A Node WebSocket client for integration tests. Every JSON frame the server sends is checked
 * against SPEC's server schemas (closed frames reject extra fields); a violation is recorded and
 * `assertProtocol()` fails the test with it. The readers and waits are FrameLog's.
 */
export class WsTestClient extends FrameLog {
  private constructor(readonly ws: WebSocket) {
    super();
    ws.on('message', (data, isBinary) => {
      const at = performance.now();
      if (isBinary) this.recordAudio(data as Buffer, at);
      else this.recordFrame(JSON.parse(String(data)), at);
    });
    ws.on('close', (code, reason) => this.recordClose({ code, reason: String(reason) }));
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

  close(): void {
    this.ws.close(1000);
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

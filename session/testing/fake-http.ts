/**
 * HTTP plumbing shared by the fake upstream servers (fake-openai-server.ts,
 * fake-openai-speech-server.ts): a loopback listener on a free port, whole-body reads, JSON
 * answers and recorded headers. What each fake answers, errors included, stays in its own file.
 */
import type { IncomingHttpHeaders, IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on a free port on 127.0.0.1; resolves with the origin, e.g. `http://127.0.0.1:39123`. */
export async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/**
 * A request listener for createServer that hands `handle` the path without its query string.
 * Write errors on the response are swallowed: they mean the client went away, which the fakes
 * record (or ignore) themselves rather than crash the test run.
 */
export function routeRequests(handle: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>): RequestListener {
  return (req, res) => {
    res.on('error', () => {});
    void handle(req, res, (req.url ?? '').split('?')[0] ?? '');
  };
}

/** Closes the server, cutting open connections first: hanging or streaming replies would otherwise hold close() forever. */
export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
}

/** The whole request body as raw bytes (multipart uploads are binary). */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Request headers as one string each (repeated headers joined with ", "), for recording. */
export function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

/** Counts a server's TCP connections and cuts the next few on demand (connect-failure faults). */
export class ConnectionFaults {
  opened = 0;
  private toDrop = 0;

  constructor(server: Server) {
    server.on('connection', (socket) => {
      this.opened += 1;
      if (this.toDrop > 0) {
        this.toDrop -= 1;
        socket.destroy();
      }
    });
  }

  drop(count: number): void {
    this.toDrop = count;
  }
}

/**
 * Cuts the connection once what was written has left: destroying at once could drop bytes still
 * buffered, turning "broke mid-answer" into "never answered".
 */
export async function cutAfterFlush(res: ServerResponse): Promise<void> {
  if (!res.destroyed) await new Promise<void>((resolve) => res.write('', () => resolve()));
  await sleep(5);
  res.socket?.destroy();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { HTTP_ERRORS } from '../../session/protocol/errors.ts';
import type { ServerContext } from '../context.ts';
import { checkKey } from '../keys/credentials.ts';
import { bearerToken } from '../http/json-body.ts';
import { StoreUnavailableError } from '../stores/unavailable.ts';
import { RETRY_AFTER_S } from '../http/http-error.ts';
import type { HandshakeAuth } from './authenticate.ts';
import { clientAddress } from '../failed-attempts.ts';
import { Connection } from './connection.ts';
import { checkUpgrade, requestPath, type UpgradeRefusal } from './upgrade-check.ts';

interface Liveness {
  alive: boolean;
}

/**
 * The `ws` server behind an HTTP server's upgrade event (noServer), so a bad handshake key is
 * refused with an HTTP 401 before any socket is accepted. A ping heartbeat terminates peers
 * that stop answering: a dead peer is found within two heartbeat intervals.
 */
export interface WebSocketEndpoint {
  /**
   * An upgrade request: taken (true) when its path is /ws; anything else is left untouched
   * (false), so a host application's own upgrade handlers can have it.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Sockets whose close handshake is under way (a close frame sent, the peer's not yet seen). */
  closing(): number;
  /** Terminates every socket still open and stops accepting. */
  close(): void;
}

export function createWebSocketEndpoint(server: ServerContext): WebSocketEndpoint {
  // Frames between MAX_FRAME_BYTES and this cap get a frame_too_large error and the session
  // lives on; past the cap ws itself closes with 1009 before buffering more.
  const hardCap = Math.max(server.config.MAX_FRAME_BYTES * 4, 1024 * 1024);
  const wss = new WebSocketServer({ noServer: true, maxPayload: hardCap, perMessageDeflate: false });
  const liveness = new WeakMap<WebSocket, Liveness>();

  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const refused = checkUpgrade(req, server.config.ALLOWED_ORIGINS);
    if (refused) return refuseUpgrade(socket, refused);
    const address = clientAddress(req, server.config.TRUST_PROXY);
    const waitMs = await server.attempts.refusedFor(address);
    if (waitMs !== undefined) {
      return refuseUpgrade(socket, { status: 429, code: 'too_many_attempts', detail: `too many failed attempts from this address; retry in ${Math.ceil(waitMs / 1000)} s`, retryAfterMs: waitMs });
    }
    let handshake: HandshakeAuth | undefined;
    const token = bearerToken(req.headers.authorization);
    if (req.headers.authorization !== undefined) {
      const checked = await checkKey(token, { store: server.stores.keys, secret: server.secret });
      if (!checked.ok) {
        await server.attempts.failed(address, 'key', checked.reason, token ?? req.headers.authorization);
        return refuseUpgrade(socket, { status: 401, code: 'unauthorized', detail: `key not accepted (${checked.reason})` });
      }
      handshake = { token: token as string, credential: checked.credential };
    }
    if (socket.destroyed) return;
    wss.handleUpgrade(req, socket, head, (ws) => {
      liveness.set(ws, { alive: true });
      ws.on('pong', () => {
        const state = liveness.get(ws);
        if (state) state.alive = true;
      });
      new Connection(ws, socket, server, handshake, address);
    });
  };

  // Nothing an upgrade request carries may throw out of this handler: an exception here would
  // end the process and every call in it (the path is read without URL parsing for that reason).
  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    if (requestPath(req.url) !== '/ws') return false;
    guardSocket(socket, server);
    onUpgrade(req, socket, head).catch((error: unknown) => {
      if (error instanceof StoreUnavailableError) {
        return refuseUpgrade(socket, { status: 503, code: 'store_unavailable', detail: 'the key database is unavailable right now; retry shortly', retryAfterMs: RETRY_AFTER_S * 1000 });
      }
      server.log.error({ err: error instanceof Error ? error.stack : String(error) }, 'upgrade handling failed');
      refuseUpgrade(socket, { status: 400, code: 'invalid_request', detail: 'the upgrade request could not be handled' });
    });
    return true;
  };

  const heartbeat = setInterval(() => {
    for (const ws of wss.clients) {
      const state = liveness.get(ws);
      if (!state) continue;
      if (!state.alive) {
        server.log.info('heartbeat: peer stopped answering pings; terminating');
        ws.terminate();
        continue;
      }
      state.alive = false;
      ws.ping();
    }
  }, server.config.HEARTBEAT_INTERVAL_MS);
  heartbeat.unref();

  return {
    handleUpgrade,
    closing() {
      let count = 0;
      for (const ws of wss.clients) if (ws.readyState === ws.CLOSING) count += 1;
      return count;
    },
    close() {
      clearInterval(heartbeat);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}

const REASONS = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests', 503: 'Service Unavailable' } as const;

type Refusal =
  | UpgradeRefusal
  | { status: 401; code: 'unauthorized'; detail: string }
  | { status: 429; code: 'too_many_attempts'; detail: string; retryAfterMs: number }
  | { status: 503; code: 'store_unavailable'; detail: string; retryAfterMs: number };

/** Node hands over an upgrade's socket without an error listener: a peer that resets it would crash us. */
export function guardSocket(socket: Duplex, server: ServerContext): void {
  socket.on('error', (err) => server.log.debug({ err: err.message }, 'upgrade socket error'));
}

/** An upgrade refused with an HTTP answer and our JSON error body. */
export function refuseUpgrade(socket: Duplex, refusal: Refusal): void {
  if (socket.destroyed) return;
  const retry = 'retryAfterMs' in refusal;
  const body = JSON.stringify({ code: refusal.code, detail: refusal.detail, retryable: HTTP_ERRORS[refusal.code].retryable, ...(retry ? { retry_after_ms: refusal.retryAfterMs } : {}) });
  const retryAfter = retry ? `Retry-After: ${Math.ceil(refusal.retryAfterMs / 1000)}\r\n` : '';
  socket.end(
    `HTTP/1.1 ${refusal.status} ${REASONS[refusal.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retryAfter}Connection: close\r\n\r\n${body}`,
  );
}

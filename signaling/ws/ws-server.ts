import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ServerContext } from '../context.ts';
import { checkKey } from '../keys/credentials.ts';
import { bearerToken } from '../http/json-body.ts';
import type { HandshakeAuth } from './authenticate.ts';
import { Connection } from './connection.ts';

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

  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/ws') return false;
    let handshake: HandshakeAuth | undefined;
    const token = bearerToken(req.headers.authorization);
    if (req.headers.authorization !== undefined) {
      const checked = checkKey(token, { store: server.keys, secret: server.secret });
      if (!checked.ok) {
        refuseUpgrade(socket, 401, 'unauthorized', `key not accepted (${checked.reason})`);
        return true;
      }
      handshake = { token: token as string, credential: checked.credential };
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      liveness.set(ws, { alive: true });
      ws.on('pong', () => {
        const state = liveness.get(ws);
        if (state) state.alive = true;
      });
      new Connection(ws, server, handshake);
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

/** An upgrade refused with an HTTP answer and our JSON error body. */
export function refuseUpgrade(socket: Duplex, status: 401 | 404, code: string, detail: string): void {
  const body = JSON.stringify({ code, detail, retryable: false });
  const reason = status === 401 ? 'Unauthorized' : 'Not Found';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

import type { IncomingMessage, Server } from 'node:http';
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
 * The `ws` server on the HTTP server's upgrade event (noServer), so a bad handshake key is
 * refused with an HTTP 401 before any socket is accepted. A ping heartbeat terminates peers
 * that stop answering: a dead peer is found within two heartbeat intervals.
 */
export interface AttachedWebSocketServer {
  /** Sockets whose close handshake is under way (a close frame sent, the peer's not yet seen). */
  closing(): number;
  /** Terminates every socket still open and stops accepting. */
  close(): void;
}

export function attachWebSocketServer(http: Server, server: ServerContext): AttachedWebSocketServer {
  // Frames between MAX_FRAME_BYTES and this cap get a frame_too_large error and the session
  // lives on; past the cap ws itself closes with 1009 before buffering more.
  const hardCap = Math.max(server.config.MAX_FRAME_BYTES * 4, 1024 * 1024);
  const wss = new WebSocketServer({ noServer: true, maxPayload: hardCap, perMessageDeflate: false });
  const liveness = new WeakMap<WebSocket, Liveness>();

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/ws') return refuse(socket, 404, 'not_found', 'the conversation endpoint is /ws');
    let handshake: HandshakeAuth | undefined;
    const token = bearerToken(req.headers.authorization);
    if (req.headers.authorization !== undefined) {
      const checked = checkKey(token, { store: server.keys, secret: server.secret });
      if (!checked.ok) return refuse(socket, 401, 'unauthorized', `key not accepted (${checked.reason})`);
      handshake = { token: token as string, credential: checked.credential };
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      liveness.set(ws, { alive: true });
      ws.on('pong', () => {
        const state = liveness.get(ws);
        if (state) state.alive = true;
      });
      new Connection(ws, socket, server, handshake);
    });
  });

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

function refuse(socket: Duplex, status: number, code: string, detail: string): void {
  const body = JSON.stringify({ code, detail, retryable: false });
  const reason = status === 401 ? 'Unauthorized' : 'Not Found';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

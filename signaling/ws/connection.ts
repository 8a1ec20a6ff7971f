import type { RawData, WebSocket } from 'ws';
import type { Session } from '../../session/session.ts';
import { randomId } from '../../session/ids.ts';
import type { ServerContext } from '../context.ts';
import { WS_ERRORS, type WsErrorCode } from '../errors.ts';
import { parseClientFrame } from '../frames/parse.ts';
import type { StartFrame } from '../frames/start.ts';
import type { Credential } from '../keys/credentials.ts';
import type { RegisteredSession } from '../session-registry.ts';
import { openSession } from './open-session.ts';
import { WebSocketTransport } from './ws-transport.ts';

export interface HandshakeAuth {
  token: string;
  credential: Credential;
}

/**
 * One WebSocket from upgrade to close: waits for the start frame, opens (or resumes) the
 * session, hands every later frame to it, and stashes the conversation when the socket drops
 * (any close but 1000) so a resume token can pick it up. Nothing a client sends can throw out.
 */
export class Connection implements RegisteredSession {
  sessionId = '';
  private session: Session | undefined;
  private account = '';
  private resumeToken = '';
  private readonly transport: WebSocketTransport;
  private startTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  /** Frames that arrived while an asynchronous start was being opened. */
  private backlog: Array<{ bytes: Buffer; isBinary: boolean }> | undefined;
  private registered = false;
  private failing = false;
  private ended = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly server: ServerContext,
    private readonly handshake: HandshakeAuth | undefined,
  ) {
    this.transport = new WebSocketTransport(ws, server.config, (code, detail) => this.fail(code, detail));
    ws.on('message', (data, isBinary) => this.onMessage(toBuffer(data), isBinary));
    ws.on('close', (code) => this.teardown(code));
    ws.on('error', (err) => this.server.log.warn({ err: err.message }, 'websocket error'));
    if (server.draining) {
      this.fail('server_restarting', 'the server is restarting; reconnect shortly');
      return;
    }
    this.startTimer = setTimeout(() => this.fail('start_timeout', `no start frame within ${server.config.START_TIMEOUT_MS} ms`), server.config.START_TIMEOUT_MS);
  }

  shutdown(code: 'server_restarting'): void {
    this.fail(code, 'the server is restarting; reconnect and resume with your resume_token');
  }

  private onMessage(bytes: Buffer, isBinary: boolean): void {
    if (this.backlog) {
      this.backlog.push({ bytes, isBinary });
      return;
    }
    try {
      if (bytes.length > this.server.config.MAX_FRAME_BYTES) {
        return this.sendError('frame_too_large', `frame of ${bytes.length} bytes exceeds MAX_FRAME_BYTES (${this.server.config.MAX_FRAME_BYTES})`);
      }
      if (!this.session) return this.onFirstFrames(bytes, isBinary);
      if (isBinary) return this.session.handleAudio(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      const parsed = parseClientFrame(bytes.toString('utf8'));
      if (!parsed.ok) return this.sendError(parsed.code, parsed.detail);
      if (parsed.frame.type === 'start') return this.sendError('already_started', 'this connection already has a session; open a new socket for another');
      this.session.handle(parsed.frame);
    } catch (error) {
      this.server.log.error({ err: error instanceof Error ? error.stack : String(error), session_id: this.sessionId }, 'frame handling failed');
      this.fail('internal_error', 'internal error while handling a frame');
    }
  }

  private onFirstFrames(bytes: Buffer, isBinary: boolean): void {
    if (isBinary) return this.fail('invalid_start_frame', 'the first frame must be the JSON start frame, not audio');
    const parsed = parseClientFrame(bytes.toString('utf8'));
    if (!parsed.ok) {
      const detail = parsed.type === 'start' ? parsed.detail : `the first frame must be a valid start frame: ${parsed.detail}`;
      return this.fail('invalid_start_frame', detail);
    }
    if (parsed.frame.type !== 'start') return this.fail('invalid_start_frame', `the first frame must be start, got ${parsed.frame.type}`);
    this.backlog = [];
    void this.onStart(parsed.frame).finally(() => {
      const waiting = this.backlog ?? [];
      this.backlog = undefined;
      for (const frame of waiting) this.onMessage(frame.bytes, frame.isBinary);
    });
  }

  private async onStart(start: StartFrame): Promise<void> {
    const opened = await openSession(this.server, this.handshake, start, this.transport);
    if (this.ended) {
      if (opened.ok) opened.session.close();
      return;
    }
    if (!opened.ok) {
      // A failed resume leaves the socket open: the client may start fresh on it.
      if (opened.code === 'resume_failed') return this.sendError(opened.code, opened.detail);
      return this.fail(opened.code, opened.detail);
    }
    this.sessionId = start.session_id;
    if (!this.server.sessions.tryAdd(this)) {
      opened.session.close();
      return this.fail('server_busy', 'the server is at MAX_SESSIONS; retry later');
    }
    this.registered = true;
    clearTimeout(this.startTimer);
    this.session = opened.session;
    this.account = opened.credential.account;
    if (opened.credential.kind === 'scoped') this.armExpiry(opened.credential.expiresAt);
    this.session.log.info({ modality: this.session.settings.modality, key_kind: opened.credential.kind, resumed: opened.resumed }, 'session started');
    this.resumeToken = randomId('rt', 32);
    this.session.begin(this.resumeToken);
  }

  /** SPEC: expiry also ends a connection still using the key (and the call stays resumable). */
  private armExpiry(expiresAt: number): void {
    const delay = Math.min(Math.max(0, expiresAt - Date.now()), 2 ** 31 - 1);
    this.expiryTimer = setTimeout(() => this.fail('key_expired', 'the scoped key expired; mint a new one and resume with your resume_token'), delay);
  }

  private sendError(code: WsErrorCode, detail: string): void {
    this.transport.sendFrame({ type: 'error', code, detail, retryable: WS_ERRORS[code].retryable });
  }

  /** A fatal error: the frame, then the close code documented for it. */
  private fail(code: WsErrorCode, detail: string): void {
    if (this.ended || this.failing) return;
    this.failing = true;
    this.sendError(code, detail);
    const spec = WS_ERRORS[code];
    const closeCode = 'close' in spec ? spec.close : 1011;
    this.transport.close(closeCode, code);
    this.teardown(closeCode);
  }

  private teardown(code: number): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.startTimer);
    clearTimeout(this.expiryTimer);
    const session = this.session;
    if (session) {
      // 1000 is a clean end (the client closed, or the call ended): nothing to resume.
      if (code !== 1000) {
        const snapshot = session.detach();
        void this.server.stash.put(this.resumeToken, { account: this.account, sessionId: this.sessionId, snapshot }, this.server.config.RESUME_TTL_S * 1000);
      } else {
        session.close();
      }
      session.log.info({ close_code: code, stashed: code !== 1000 }, 'session ended');
    }
    if (this.registered) {
      this.registered = false;
      this.server.sessions.remove(this);
    }
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { Session } from '../../session/session.ts';
import type { ServerContext } from '../context.ts';
import { WS_ERRORS, type ErrorCode, type WsErrorCode } from '../../session/protocol/errors.ts';
import type { StartFrame } from '../../session/protocol/start.ts';
import type { HandshakeAuth } from './authenticate.ts';
import type { RegisteredSession } from '../session-registry.ts';
import { giveBackUntaken, prepareSession, type PreparedSession } from './open-session.ts';
import { answerOneShot } from './one-shot.ts';
import { StartRefusals } from './start-refusals.ts';
import type { ClientFrameOf } from '../../session/protocol/client.ts';
import { LiveRecord } from './live-record.ts';
import { FrameBacklog } from './frame-backlog.ts';
import { messageBytes, WebSocketTransport } from './ws-transport.ts';
import { WebRtcSetup } from '../webrtc/webrtc-setup.ts';
import type { WebRtcTransport } from '../webrtc/webrtc-transport.ts';
import type { Transport } from '../../session/transport.ts';
import { sessionTelemetry, socketMetrics, type SessionFacts, type SessionTelemetry } from '../observability/session-telemetry.ts';
import { errorWith, readFirstFrame, routeCallFrame, type ErrorExtra } from './frame-routing.ts';

/**
 * One WebSocket from upgrade to close: waits for the start frame, opens (or resumes) the
 * session, hands every later frame to it, and stashes the conversation when the socket drops
 * (any close but 1000) so a resume token can pick it up. Nothing a client sends can throw out.
 */
export class Connection implements RegisteredSession {
  sessionId = '';
  private account = '';
  private session: Session | undefined;
  /** The conversation's lease and stash entry, from the accepted start on. */
  private record: LiveRecord | undefined;
  /** A stash entry this connection's start took, until its session begins. */
  private untaken: PreparedSession['taken'];
  private readonly transport: WebSocketTransport;
  /** Where frames go: the socket, or the WebRTC transport once a call is connected. */
  private frames: Transport;
  private webrtc: WebRtcSetup | undefined;
  private webrtcTransport: WebRtcTransport | undefined;
  private telemetry: SessionTelemetry | undefined;
  private startTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  /** Frames that arrived while a start or an input_text verdict was being decided. */
  private readonly backlog = new FrameBacklog((bytes, isBinary) => this.onMessage(bytes, isBinary));
  private registered = false;
  private failing = false;
  private ended = false;
  private readonly refusals: StartRefusals;

  constructor(
    ws: WebSocket,
    socket: Duplex,
    private readonly server: ServerContext,
    private readonly handshake: HandshakeAuth | undefined,
    address: string,
  ) {
    this.refusals = new StartRefusals(server, handshake, address);
    this.transport = new WebSocketTransport(ws, socket, server.config, (code, detail) => this.fail(code, detail), socketMetrics(server.observability));
    this.frames = this.transport;
    ws.on('message', (data, isBinary) => this.onMessage(messageBytes(data), isBinary));
    // A connected WebRTC call outlives its signaling socket (SPEC): only the peer ends it.
    ws.on('close', (code) => {
      if (!this.webrtc?.connected) this.teardown(code);
    });
    ws.on('error', (err) => this.server.log.warn({ err: err.message }, 'websocket error'));
    if (server.draining) {
      this.fail('server_restarting', 'the server is restarting; reconnect shortly');
      return;
    }
    this.startTimer = setTimeout(() => this.fail('start_timeout', `no start frame within ${server.config.START_TIMEOUT_MS} ms`), server.config.START_TIMEOUT_MS);
  }

  get resumeToken(): string {
    return this.session ? (this.record?.token ?? '') : '';
  }

  shutdown(code: 'server_restarting'): void {
    this.fail(code, 'the server is restarting; reconnect and resume with your resume_token');
  }

  warnRestart(inMs: number): void {
    this.session?.closing.announce('restart', inMs, true);
  }

  checkpoint(): void {
    if (this.session && !this.failing && !this.ended) this.record?.checkpoint(this.session);
  }

  private onMessage(bytes: Buffer, isBinary: boolean): void {
    this.transport.checkBacklog();
    if (this.backlog.keep(bytes, isBinary)) return;
    try {
      if (bytes.length > this.server.config.MAX_FRAME_BYTES) {
        return this.sendError('frame_too_large', `frame of ${bytes.length} bytes exceeds MAX_FRAME_BYTES (${this.server.config.MAX_FRAME_BYTES})`);
      }
      if (!this.session && !this.webrtc) return this.onFirstFrames(bytes, isBinary);
      if (isBinary) {
        if (this.webrtc) return this.sendError('invalid_frame', 'on the WebRTC transport microphone audio travels on the peer connection, not the socket');
        // A Buffer is a Uint8Array: handed over as it is, no view per frame.
        return this.session!.handleAudio(bytes);
      }
      this.onText(bytes.toString('utf8'));
    } catch (error) {
      this.server.log.error({ err: error instanceof Error ? error.stack : String(error), session_id: this.sessionId }, 'frame handling failed');
      this.fail('internal_error', 'internal error while handling a frame');
    }
  }

  /** A JSON frame from the socket or the control data channel. */
  private onText(text: string): void {
    routeCallFrame(
      {
        session: this.session,
        webrtc: this.webrtc,
        limits: this.server.usage.limits,
        account: this.account,
        sendError: (code, detail, extra) => this.sendError(code, detail, extra),
        hold: (verdict) => this.backlog.hold(verdict),
      },
      text,
    );
  }

  private onFirstFrames(bytes: Buffer, isBinary: boolean): void {
    const first = readFirstFrame(bytes, isBinary);
    if (first.kind === 'refused') return this.fail('invalid_start_frame', first.detail);
    if (first.kind === 'one-shot') return this.onOneShot(first.frame);
    const start = first.frame;
    this.backlog.hold(
      this.onStart(start).catch((error: unknown) => {
        this.server.log.error({ err: error instanceof Error ? error.stack : String(error), session_id: start.session_id }, 'opening the session failed');
        this.fail('internal_error', 'internal error while opening the session');
      }),
    );
  }

  /** A report on a socket of its own: store, acknowledge, close cleanly. */
  private onOneShot(frame: ClientFrameOf<'feedback' | 'client_error'>): void {
    clearTimeout(this.startTimer);
    answerOneShot(this.server, this.handshake, frame, { transport: this.transport, refusals: this.refusals, fail: (code, detail) => this.fail(code, detail) });
  }

  private async onStart(start: StartFrame): Promise<void> {
    const starting = this.start(start);
    this.server.sessions.trackStart(starting);
    await starting;
  }

  private async start(start: StartFrame): Promise<void> {
    this.sessionId = start.session_id;
    const waitMs = await this.refusals.waitMs();
    if (waitMs !== undefined) {
      return this.fail('too_many_attempts', `too many failed attempts from this address; retry in ${Math.ceil(waitMs / 1000)} s`, { retry_after_ms: waitMs });
    }
    const prepared = await prepareSession(this.server, this.handshake, start, { admit: () => this.admit(), onTurnEnd: () => this.checkpoint() });
    // Until the session begins, a conversation this start took is given back if the start ends.
    if (prepared.ok) this.untaken = prepared.taken;
    if (this.ended) return this.giveBack();
    if (!prepared.ok) {
      this.leaveRegistry();
      // A failed resume leaves the socket open: the client may start fresh on it, a few times.
      const refusal = await this.refusals.startRefused(prepared.code, prepared.detail, start);
      const limit = prepared.limit ? { retry_after_ms: prepared.retryAfterMs, limit: prepared.limit } : {};
      return refusal.fatal ? this.fail(refusal.code, refusal.detail, limit) : this.sendError(refusal.code, refusal.detail);
    }
    if (this.server.draining) return this.fail('server_restarting', 'the server is restarting; reconnect and resume with your resume_token');
    clearTimeout(this.startTimer);
    const transport = start.transport?.kind === 'webrtc' ? 'webrtc' : 'websocket';
    const record = new LiveRecord(this.server, { account: prepared.credential.account, sessionId: start.session_id }, { modality: prepared.settings.modality, transport }, () =>
      this.fail('resumed_elsewhere', 'this conversation was resumed on another connection with its resume token'),
    );
    this.record = record;
    this.account = prepared.credential.account;
    // MAX_SESSIONS_PER_ACCOUNT: counted in the live-session registry, across processes with Redis.
    const joined = await record.register(prepared.maxSessions);
    if (this.ended) return;
    if (joined !== 'acquired') return this.fail('rate_limited', joined.detail, { retry_after_ms: joined.retryAfterMs, limit: 'max_sessions' });
    if (prepared.credential.kind === 'scoped') this.armExpiry(prepared.credential.expiresAt);
    const { credential } = prepared;
    const facts: SessionFacts = { sessionId: this.sessionId, account: prepared.credential.account, transport, modality: prepared.settings.modality, resumed: prepared.resumed };
    const telemetry = (this.telemetry = sessionTelemetry(this.server.observability, this.server.log, facts));
    const observed: PreparedSession = { ...prepared, build: (on, media) => prepared.build(on, media, telemetry) };
    const begin = (session: Session): void => {
      this.session = session;
      this.untaken = undefined;
      session.log.info({ modality: session.settings.modality, transport, key_kind: credential.kind, resumed: prepared.resumed }, 'session started');
      session.begin(record.token);
      record.checkpoint(session);
      if (credential.kind === 'scoped') {
        // SPEC's two-hour window ends with the scoped key: announced ahead, then closed (resumable with a fresh key).
        clearTimeout(this.expiryTimer);
        session.closing.plan('session_window', credential.expiresAt - Date.now(), true, () => this.expire());
      }
    };
    if (transport === 'websocket') return begin(observed.build(this.transport));
    // WebRTC: ready waits until the peer is connected, so the greeting is never spoken into a
    // call that cannot carry it yet.
    this.webrtc = new WebRtcSetup(this.server, start.session_id, observed, this.transport, {
      sendError: (code, detail) => this.sendError(code, detail),
      onSession: (session, transport) => {
        clearTimeout(this.startTimer);
        this.frames = transport;
        this.webrtcTransport = transport;
        begin(session);
      },
      onControl: (text) => this.onText(text),
      onGone: () => this.teardown(this.webrtcTransport?.closeCode ?? 1006),
    });
    this.startTimer = setTimeout(() => this.fail('start_timeout', 'the WebRTC call did not connect in time'), this.server.config.START_TIMEOUT_MS * 3);
  }

  private admit(): boolean {
    if (this.ended || !this.server.sessions.tryAdd(this)) return false;
    this.registered = true;
    return true;
  }

  private leaveRegistry(): void {
    if (!this.registered) return;
    this.registered = false;
    this.server.sessions.remove(this);
  }

  /** SPEC: expiry also ends a connection still using the key (and the call stays resumable). */
  private armExpiry(expiresAt: number): void {
    const delay = Math.min(Math.max(0, expiresAt - Date.now()), 2 ** 31 - 1);
    this.expiryTimer = setTimeout(() => this.expire(), delay);
  }

  private expire(): void {
    this.fail('key_expired', 'the scoped key expired; mint a new one and resume with your resume_token');
  }

  private sendError(code: ErrorCode, detail: string, extra: ErrorExtra = {}): void {
    this.frames.sendFrame(errorWith(code, detail, extra));
  }

  /**
   * A fatal error: the frame, then the close code documented for it. A live conversation is
   * stashed first, because the client may reconnect to another process the moment it hears.
   */
  private fail(code: WsErrorCode, detail: string, extra: ErrorExtra = {}): void {
    if (this.ended || this.failing) return;
    this.failing = true;
    const spec = WS_ERRORS[code];
    const closeCode = 'close' in spec ? spec.close : 1011;
    const close = (): void => {
      this.sendError(code, detail, extra);
      this.frames.close(closeCode, code);
      this.teardown(closeCode);
    };
    if (this.session && this.record) void this.record.stash(this.session).finally(close);
    else close();
  }

  /** A start that took a conversation ended before its session began: the token works again. */
  private giveBack(): void {
    if (this.untaken) giveBackUntaken(this.server, this.untaken);
    this.untaken = undefined;
  }

  /** Never throws: it runs in socket and peer event handlers, where an exception ends the process. */
  private teardown(code: number): void {
    if (this.ended) return;
    this.ended = true;
    try {
      this.release(code);
    } catch (error) {
      this.server.log.error({ err: error instanceof Error ? error.stack : String(error), session_id: this.sessionId }, 'ending the session failed');
      this.session?.close();
    } finally {
      this.leaveRegistry();
    }
  }

  private release(code: number): void {
    clearTimeout(this.startTimer);
    clearTimeout(this.expiryTimer);
    if (!this.session) this.webrtc?.close();
    const session = this.session;
    const record = this.record;
    if (session && record) {
      // 1000 is a clean end (the client closed, or the call ended): nothing to resume.
      if (code === 1000) record.end(session);
      else void record.stash(session);
      session.log.info({ close_code: code, stashed: code !== 1000 }, 'session ended');
    }
    this.telemetry?.end(code);
    record?.release();
    this.giveBack();
  }
}

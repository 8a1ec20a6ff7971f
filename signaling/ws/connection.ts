import type { RawData, WebSocket } from 'ws';
import { Session } from '../../session/session.ts';
import { resolveSettings } from '../../session/settings.ts';
import { randomId } from '../../session/ids.ts';
import type { ServerContext } from '../context.ts';
import { WS_ERRORS, type WsErrorCode } from '../errors.ts';
import { parseClientFrame } from '../frames/parse.ts';
import type { StartFrame } from '../frames/start.ts';
import { validateTools } from '../frames/tools.ts';
import type { Credential } from '../keys/credentials.ts';
import type { RegisteredSession } from '../session-registry.ts';
import { authenticateStart } from './authenticate.ts';
import { WebSocketTransport } from './ws-transport.ts';

export interface HandshakeAuth {
  token: string;
  credential: Credential;
}

/**
 * One WebSocket from upgrade to close: waits for the start frame, authenticates, hands every
 * later frame to its Session. Nothing a client sends can throw out of here.
 */
export class Connection implements RegisteredSession {
  sessionId = '';
  private session: Session | undefined;
  private readonly transport: WebSocketTransport;
  private startTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  private registered = false;
  private ended = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly server: ServerContext,
    private readonly handshake: HandshakeAuth | undefined,
  ) {
    this.transport = new WebSocketTransport(ws);
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', (code) => this.onClose(code));
    ws.on('error', (err) => this.server.log.warn({ err: err.message }, 'websocket error'));
    if (server.draining) {
      this.fail('server_restarting', 'the server is restarting; reconnect shortly');
      return;
    }
    this.startTimer = setTimeout(
      () => this.fail('start_timeout', `no start frame within ${server.config.START_TIMEOUT_MS} ms`),
      server.config.START_TIMEOUT_MS,
    );
  }

  shutdown(code: 'server_restarting'): void {
    this.fail(code, 'the server is restarting; reconnect and resume with your resume_token');
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    try {
      const bytes = toBuffer(data);
      if (bytes.length > this.server.config.MAX_FRAME_BYTES) {
        return this.sendError('frame_too_large', `frame of ${bytes.length} bytes exceeds MAX_FRAME_BYTES (${this.server.config.MAX_FRAME_BYTES})`);
      }
      if (!this.session) return this.onFirstFrames(bytes, isBinary);
      if (isBinary) return this.onAudio(bytes);
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
    this.onStart(parsed.frame);
  }

  private onStart(start: StartFrame): void {
    const { config, log } = this.server;
    const webSearch = start.mode.web_search ?? false;
    const endCall = start.mode.end_call ?? false;
    if (start.transport?.kind === 'webrtc') return this.fail('unsupported_transport', 'the WebRTC transport is not available on this server; use the WebSocket transport');
    const tools = validateTools(start.mode.tools ?? [], { webSearch, endCall });
    if (!tools.ok) return this.fail('invalid_tools', tools.detail);
    if (webSearch && !this.server.search) {
      return this.fail('web_search_unavailable', 'mode.web_search needs a search backend: the server has no SEARCH_URL configured');
    }
    const auth = authenticateStart(this.server, this.handshake, start.api_key, start.session_id);
    if (!auth.ok) return this.fail('unauthorized', auth.detail);
    if (start.mode.voice !== undefined && !this.server.voices.find(start.mode.voice)) {
      return this.fail('invalid_start_frame', `mode.voice: unknown voice "${start.mode.voice}"`);
    }
    if ((start.mode.modality ?? 'voice') === 'voice' && !this.server.voice.ok) {
      return this.fail('voice_unavailable', `voice sessions are not available on this server: ${this.server.voice.reason}; text sessions still work`);
    }
    if (start.resume_token !== undefined) {
      // No stash can match yet: every token is unknown. The socket stays open for a fresh start.
      return this.sendError('resume_failed', 'resume token is unknown, expired or already used; start again without it');
    }
    this.sessionId = start.session_id;
    if (!this.server.sessions.tryAdd(this)) return this.fail('server_busy', 'the server is at MAX_SESSIONS; retry later');
    this.registered = true;
    clearTimeout(this.startTimer);

    const settings = resolveSettings(start.mode, start.audio, tools.tools, {
      greeting: config.GREETING,
      voice: config.DEFAULT_VOICE,
      temperature: config.DEFAULT_TEMPERATURE,
    });
    const sessionLog = log.child({ session_id: start.session_id, account: auth.credential.account });
    this.session = new Session(start.session_id, settings, {
      transport: this.transport,
      llm: this.server.llm,
      voices: this.server.voices,
      log: sessionLog,
      ...(this.server.search ? { search: this.server.search } : {}),
      tools: {
        defaultTimeoutMs: config.TOOL_TIMEOUT_MS,
        deferredTimeoutMs: config.DEFERRED_TIMEOUT_S * 1000,
        permissionTimeoutMs: config.PERMISSION_TIMEOUT_S * 1000,
        deepModel: config.LLM_DEEP_MODEL,
      },
      endCallGraceMs: config.END_CALL_GRACE_MS,
      signOff: config.WRAP_UP_SIGN_OFF,
      ...(settings.modality === 'voice' && this.server.voice.ok ? { voice: this.server.voice } : {}),
    });
    if (auth.credential.kind === 'scoped') this.armExpiry(auth.credential.expiresAt);
    sessionLog.info({ modality: settings.modality, key_kind: auth.credential.kind }, 'session started');
    this.session.begin(randomId('rt', 32));
  }

  private onAudio(bytes: Buffer): void {
    this.session?.handleAudio(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }

  /** SPEC: expiry also ends a connection still using the key. */
  private armExpiry(expiresAt: number): void {
    const delay = Math.max(0, expiresAt - Date.now());
    // setTimeout overflows past ~24.8 days; scoped keys live hours, but clamp anyway.
    this.expiryTimer = setTimeout(() => this.fail('key_expired', 'the scoped key expired; mint a new one and resume with your resume_token'), Math.min(delay, 2 ** 31 - 1));
  }

  private sendError(code: WsErrorCode, detail: string): void {
    this.transport.sendFrame({ type: 'error', code, detail, retryable: WS_ERRORS[code].retryable });
  }

  /** A fatal error: the frame, then the close code documented for it. */
  private fail(code: WsErrorCode, detail: string): void {
    if (this.ended) return;
    this.ended = true;
    this.sendError(code, detail);
    const spec = WS_ERRORS[code];
    this.transport.close('close' in spec ? spec.close : 1011, code);
    this.teardown();
  }

  private onClose(code: number): void {
    if (this.session) this.server.log.info({ session_id: this.sessionId, close_code: code }, 'session ended');
    this.ended = true;
    this.teardown();
  }

  private teardown(): void {
    clearTimeout(this.startTimer);
    clearTimeout(this.expiryTimer);
    this.session?.close();
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

import type { StartFrame } from '../../session/protocol/start.ts';
import { libraryError, RealtimeError } from './errors.ts';
import { nextReconnectDelay, type ReconnectPolicy } from './reconnect-policy.ts';
import { ResumeKeeper, type ResumeState } from './resume-state.ts';
import { SignalingSocket } from './signaling-socket.ts';
import type { LibraryEventDetails, ReadyFrame } from './types.ts';
import type { WebSocketConstructor } from './websocket-impl.ts';
import { RtcCall } from './webrtc/rtc-call.ts';
import type { IceServerEntry } from './webrtc/webrtc-link.ts';

type Frame = { type: string } & Record<string, unknown>;

export interface LinkHost {
  startFrame(resumeToken: string | undefined): StartFrame;
  /** Every inbound JSON frame, from the socket or the control channel. */
  frame(frame: Frame): void;
  audio(bytes: ArrayBuffer): void;
  /** ready arrived (resumed: a resume token was accepted). */
  ready(frame: ReadyFrame, resumed: boolean): void;
  /** The live connection went away (acks in flight fail, the reply in flight is gone). */
  lost(error: RealtimeError): void;
  /** The conversation is over for this client. */
  ended(): void;
  emit<K extends keyof LibraryEventDetails>(type: K, detail: LibraryEventDetails[K]): void;
  micTrack(): MediaStreamTrack | undefined;
  raw(direction: 'in' | 'out', frame: unknown): void;
}

export interface LinkConfig {
  url: string;
  /** The caller's class; otherwise the global one, looked up at each connection. */
  webSocket: WebSocketConstructor | undefined;
  sessionId: () => string;
  transport: 'ws' | 'webrtc';
  autoReconnect: boolean;
  policy: ReconnectPolicy;
}

export type LinkPhase = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/**
 * The connection state machine: connect (resolves on ready), the resume token (ResumeKeeper),
 * automatic reconnection with backoff after abnormal loss, the WebRTC call when that transport
 * is used (RtcCall), and a clean close. idle → connecting → open ⇄ reconnecting → closed; closed
 * behaves like idle for a later connect().
 */
export class ConversationLink {
  phase: LinkPhase = 'idle';
  private socket: SignalingSocket | undefined;
  private readonly rtc = new RtcCall({
    signal: (frame) => this.socket?.sendText(JSON.stringify(frame)) ?? false,
    controlFrame: (frame) => this.onControlFrame(frame),
    failed: (detail) => this.rtcFailed(detail),
    micTrack: () => this.host.micTrack(),
  });
  private readonly resume = new ResumeKeeper({
    changed: (state) => this.host.emit('resume_state', { state }),
    refused: (error) => this.host.emit('resume_failed', { error }),
  });
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The last error frame on the live connection: a non-retryable one before a close stops reconnection. */
  private lastError: { code: string; retryable: boolean; at: number } | undefined;

  constructor(
    private readonly cfg: LinkConfig,
    private readonly host: LinkHost,
  ) {}

  get connected(): boolean {
    return this.phase === 'open';
  }

  get resumeState(): ResumeState | null {
    return this.resume.current;
  }

  get peerConnection(): RTCPeerConnection | undefined {
    return this.rtc.peerConnection;
  }

  importResume(state: ResumeState | null): void {
    this.resume.adopt(state);
  }

  async connect(): Promise<ReadyFrame> {
    if (this.phase === 'connecting' || this.phase === 'open' || this.phase === 'reconnecting') throw libraryError('already_connected');
    this.phase = 'connecting';
    this.attempt = 0;
    try {
      return await this.open(false);
    } catch (error) {
      if (this.phase === 'connecting') this.phase = 'idle';
      if (error instanceof RealtimeError && error.code === 'resume_failed') this.resume.refused(error);
      throw error;
    }
  }

  /** Sends a JSON frame: over the WebRTC control channel when it is open, else the socket. */
  send(frame: object): boolean {
    const text = JSON.stringify(frame);
    const sent = this.rtc.send(text) || (this.phase === 'open' && this.socket?.sendText(text)) || false;
    if (sent) this.host.raw('out', frame);
    return sent;
  }

  sendBinary(bytes: ArrayBuffer): boolean {
    if (this.phase !== 'open' || !this.socket?.sendBinary(bytes)) return false;
    this.host.raw('out', { binary: bytes.byteLength });
    return true;
  }

  async setMicTrack(track: MediaStreamTrack | null): Promise<void> {
    await this.rtc.setMicTrack(track);
  }

  async unlock(): Promise<void> {
    await this.rtc.unlock();
  }

  /** Ends the conversation cleanly (1000: nothing to resume) and forgets the resume state. */
  close(reason = 'client closed'): SignalingSocket | undefined {
    const was = this.phase;
    const socket = this.socket;
    this.phase = 'closed';
    clearTimeout(this.timer);
    this.timer = undefined;
    this.resume.clear();
    this.rtc.close();
    const live = socket !== undefined && !socket.closed;
    if (live) socket.close(1000, reason);
    // An open socket reports its own close (and ends there); otherwise end here.
    if (was === 'reconnecting' || (was === 'open' && !live)) this.end(1000, reason);
    return live ? socket : undefined;
  }

  /** Test-only: closes the live socket with an abnormal code, as a network drop would. */
  dropForTesting(code: number): boolean {
    if (!this.socket || this.phase !== 'open') return false;
    this.socket.close(code, 'debug drop');
    return true;
  }

  private open(reconnecting: boolean): Promise<ReadyFrame> {
    return new Promise<ReadyFrame>((resolve, reject) => {
      let settled = false;
      let socket: SignalingSocket;
      const fail = (error: RealtimeError): void => {
        if (settled) return;
        settled = true;
        socket.retire(1000, 'start refused');
        if (this.socket === socket) this.socket = undefined;
        this.rtc.close();
        reject(error);
      };
      const onFrame = (frame: Frame): void => {
        this.host.raw('in', frame);
        if (!settled && frame.type === 'ready') {
          settled = true;
          this.onReady(frame as unknown as ReadyFrame);
          this.host.frame(frame);
          if (reconnecting) {
            this.host.emit('reconnected', { attempt: this.attempt, resumed: true });
            this.attempt = 0;
          }
          resolve(frame as unknown as ReadyFrame);
          return;
        }
        if (frame.type === 'error') this.lastError = { code: String(frame.code), retryable: frame.retryable === true, at: Date.now() };
        this.host.frame(frame);
        if (settled) return this.afterReadyFrame(frame);
        if (frame.type === 'error') fail(new RealtimeError(String(frame.code), String(frame.detail ?? ''), frame.retryable === true));
        else if (frame.type === 'webrtc_ice') this.rtc.start(frame.ice_servers as IceServerEntry[], fail);
        else if (frame.type === 'webrtc_answer') this.rtc.answer(frame, fail);
      };
      try {
        socket = new SignalingSocket(this.cfg.url, this.cfg.webSocket, {
          open: () => {
            const start = this.host.startFrame(this.resume.token);
            this.host.raw('out', { ...start, api_key: start.api_key ? '…' : undefined });
            socket.sendText(JSON.stringify(start));
          },
          frame: onFrame,
          audio: (bytes) => {
            this.host.raw('in', { binary: bytes.byteLength });
            this.host.audio(bytes);
          },
          close: (code, reason) => {
            if (!settled) {
              const closedByUs = this.phase === 'closed';
              fail(libraryError('connection_closed', `the socket closed before ready (${code}${reason ? ` ${reason}` : ''})`, !closedByUs));
              return;
            }
            this.onSocketClosed(socket, code, reason);
          },
        });
      } catch (error) {
        reject(libraryError('connection_closed', `cannot open ${this.cfg.url}: ${String(error)}`, false));
        return;
      }
      this.socket = socket;
      this.lastError = undefined;
    });
  }

  /** Frames after ready that concern the link itself (WebRTC signaling, bye on the socket). */
  private afterReadyFrame(frame: Frame): void {
    if (frame.type === 'webrtc_answer') this.rtc.answer(frame, (error) => this.rtcFailed(error.message));
    else if (frame.type === 'webrtc_ice' && !this.rtc.started) this.rtc.start(frame.ice_servers as IceServerEntry[], (error) => this.rtcFailed(error.message));
  }

  private onReady(frame: ReadyFrame): void {
    this.phase = 'open';
    const resumed = this.resume.ready(this.cfg.sessionId(), frame.resume_token, frame.modality);
    this.host.ready(frame, resumed);
  }

  private onControlFrame(frame: Frame): void {
    this.host.raw('in', frame);
    this.host.frame(frame);
    // bye: the server is about to close the peer connection; the code says how.
    if (frame.type === 'bye' && this.phase === 'open') {
      this.socket?.retire();
      this.socket = undefined;
      this.rtc.close();
      this.lose(typeof frame.code === 'number' ? frame.code : 1000, typeof frame.reason === 'string' ? frame.reason : '');
    }
  }

  private rtcFailed(detail: string): void {
    if (this.phase !== 'open') return;
    this.socket?.retire(4000, 'peer connection failed');
    this.socket = undefined;
    this.rtc.close();
    this.lose(1006, detail);
  }

  private onSocketClosed(socket: SignalingSocket, code: number, reason: string): void {
    if (socket.retired || socket !== this.socket) return;
    this.socket = undefined;
    if (this.phase === 'closed') return this.end(code, reason);
    // WebRTC: once media flows the call lives on the peer connection; signaling may drop.
    if (this.rtc.connected) return;
    this.lose(code, reason);
  }

  /** The live connection is gone: a clean end, a reconnect, or the end of the line. */
  private lose(code: number, reason: string): void {
    this.rtc.close();
    this.host.lost(libraryError('connection_closed', `connection lost (${code})`, code !== 1000));
    if (code === 1000) {
      this.phase = 'closed';
      this.resume.clear();
      this.host.emit('session_end', { code, reason });
      return this.end(code, reason);
    }
    // A fatal error frame (the server closes right after it, with its code as the reason) that is
    // not retryable would only fail again: no reconnect. Other errors are per-frame and harmless.
    const last = this.lastError;
    const fatal = last !== undefined && !last.retryable && (reason === last.code || Date.now() - last.at < 1000);
    if (this.cfg.autoReconnect && this.resume.token !== undefined && !fatal) return this.scheduleReconnect(code, reason);
    this.phase = 'closed';
    this.end(code, reason);
  }

  private scheduleReconnect(code: number, reason: string): void {
    this.attempt += 1;
    const delay = nextReconnectDelay(this.attempt, this.cfg.policy);
    if (delay === null) {
      const error = libraryError('reconnect_exhausted', `could not reconnect after ${this.attempt - 1} attempts`);
      this.phase = 'closed';
      this.host.emit('failed', { code: error.code, error });
      return this.end(code, reason);
    }
    this.phase = 'reconnecting';
    this.host.emit('reconnecting', { attempt: this.attempt, delay_ms: delay, code, reason });
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.phase !== 'reconnecting') return;
      this.open(true).catch((error: RealtimeError) => {
        if (this.phase !== 'reconnecting') return;
        if (error.code === 'resume_failed') {
          this.resume.refused(error);
          this.phase = 'closed';
          return this.end(code, reason);
        }
        if (error.retryable) return this.scheduleReconnect(code, reason);
        this.phase = 'closed';
        this.host.emit('failed', { code: error.code, error });
        this.end(code, reason);
      });
    }, delay);
  }

  private end(code: number, reason: string): void {
    this.host.ended();
    this.host.emit('close', { code, reason });
  }
}

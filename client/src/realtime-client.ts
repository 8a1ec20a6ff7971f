import { FRAME_EVENT, type ConnectOptions, type Mode, type RealtimeClientOptions, type ServerFrame } from './types.ts';

/** Error raised by connect() and friends; `code` is the server's stable error code. */
export class RealtimeError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'RealtimeError';
  }
}

function generateSessionId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `s_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * Browser client for the conversation protocol. Each inbound JSON frame is dispatched twice:
 * once under its `type` (e.g. `text_delta`) and once under the catch-all `frame`; the frame's
 * fields are in `event.detail`. Use one style per handler, never both.
 */
export class RealtimeClient extends EventTarget {
  readonly sessionId: string;
  private ws: WebSocket | undefined;
  private readonly options: RealtimeClientOptions;
  private activeTurn: string | undefined;
  private readyFrame: Extract<ServerFrame, { type: 'ready' }> | undefined;

  constructor(options: RealtimeClientOptions) {
    super();
    if (!options.url) throw new TypeError('RealtimeClient: url is required');
    this.options = options;
    this.sessionId = options.sessionId ?? generateSessionId();
  }

  /** The effective mode sent in the start frame. */
  get mode(): Mode {
    return { kind: 'service', ...this.options.mode } as Mode;
  }

  /** True while an assistant reply is active (between turn and done). */
  get responding(): boolean {
    return this.activeTurn !== undefined;
  }

  get ready(): Extract<ServerFrame, { type: 'ready' }> | undefined {
    return this.readyFrame;
  }

  /** Opens the socket and sends start; resolves with the ready frame, rejects with RealtimeError. */
  connect(options: ConnectOptions = {}): Promise<Extract<ServerFrame, { type: 'ready' }>> {
    if (this.ws) return Promise.reject(new RealtimeError('already_connected', 'connect() was already called'));
    const mode: Mode = { ...this.mode };
    if (options.temperature !== undefined) mode.temperature = options.temperature;
    if (options.noGreeting) mode.greeting = false;
    const start: Record<string, unknown> = { type: 'start', session_id: this.sessionId, mode };
    if (this.options.apiKey) start.api_key = this.options.apiKey;
    if ((mode.modality ?? 'voice') !== 'text') start.audio = { sr: 16000, output_encoding: 'pcm16', output_sr: 16000 };
    const client: Record<string, string> = { name: 'parley-client' };
    if (this.options.user) client.user = this.options.user;
    if (this.options.timezone) client.timezone = this.options.timezone;
    start.client = client;

    const ws = new WebSocket(this.options.url);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    return new Promise((resolve, reject) => {
      let settled = false;
      ws.onopen = () => ws.send(JSON.stringify(start));
      ws.onmessage = (event) => {
        if (typeof event.data !== 'string') return;
        let frame: ServerFrame;
        try {
          frame = JSON.parse(event.data) as ServerFrame;
        } catch {
          return;
        }
        if (!settled && frame.type === 'ready') {
          settled = true;
          this.readyFrame = frame;
          resolve(frame);
        } else if (!settled && frame.type === 'error') {
          settled = true;
          reject(new RealtimeError(frame.code, frame.detail, frame.retryable));
        }
        this.onFrame(frame);
      };
      ws.onclose = (event) => {
        this.ws = undefined;
        this.activeTurn = undefined;
        if (!settled) {
          settled = true;
          reject(new RealtimeError('connection_closed', `socket closed before ready (${event.code})`, true));
        }
        this.emit('close', { code: event.code, reason: event.reason });
        if (event.code === 1000) this.emit('session_end', { code: event.code, reason: event.reason });
      };
    });
  }

  /** Sends one typed user turn (text modality). Returns false when not connected. */
  sendText(text: string): boolean {
    return this.sendJson({ type: 'input_text', text });
  }

  setVoice(voice: string): boolean {
    return this.sendJson({ type: 'set_voice', voice });
  }

  reset(): boolean {
    return this.sendJson({ type: 'reset' });
  }

  interrupt(): boolean {
    return this.sendJson({ type: 'interrupt' });
  }

  close(): void {
    this.ws?.close(1000, 'client closed');
    this.ws = undefined;
  }

  private sendJson(frame: Record<string, unknown>): boolean {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  private onFrame(frame: ServerFrame): void {
    if (frame.type === 'turn') this.activeTurn = frame.turn_id;
    if (frame.type === 'done' && frame.turn_id === this.activeTurn) this.activeTurn = undefined;
    this.emit(frame.type, frame);
    this.emit(FRAME_EVENT, frame);
  }

  private emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}

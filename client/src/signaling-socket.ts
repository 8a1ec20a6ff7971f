export interface SocketHandlers {
  open(): void;
  /** A parsed JSON frame (anything with a string `type`); malformed text is dropped. */
  frame(frame: { type: string } & Record<string, unknown>): void;
  audio(bytes: ArrayBuffer): void;
  close(code: number, reason: string): void;
}

/**
 * One WebSocket to /ws: JSON frames and binary audio in, both out. A socket the client no longer
 * wants is `retire`d: closed cleanly and deaf from then on, so its close event cannot be
 * mistaken for a loss of the live connection.
 */
export class SignalingSocket {
  retired = false;
  private readonly ws: WebSocket;
  private readonly closedPromise: Promise<void>;
  private isClosed = false;

  /** Throws (SyntaxError) for a malformed URL, as the WebSocket constructor does. */
  constructor(url: string, handlers: SocketHandlers) {
    this.ws = new WebSocket(url);
    this.ws.binaryType = 'arraybuffer';
    let markClosed!: () => void;
    this.closedPromise = new Promise((resolve) => (markClosed = resolve));
    this.ws.onopen = () => {
      if (!this.retired) handlers.open();
    };
    this.ws.onmessage = (event: MessageEvent) => {
      if (this.retired) return;
      if (typeof event.data !== 'string') {
        if (event.data instanceof ArrayBuffer) handlers.audio(event.data);
        return;
      }
      let frame: unknown;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      if (typeof frame === 'object' && frame !== null && typeof (frame as { type?: unknown }).type === 'string') {
        handlers.frame(frame as { type: string } & Record<string, unknown>);
      }
    };
    // An error is always followed by a close (1006): the close handler decides what it means.
    this.ws.onerror = () => undefined;
    this.ws.onclose = (event: CloseEvent) => {
      this.isClosed = true;
      markClosed();
      if (!this.retired) handlers.close(event.code, event.reason);
    };
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Resolves when the socket's close event has fired. */
  whenClosed(): Promise<void> {
    return this.closedPromise;
  }

  sendText(text: string): boolean {
    if (this.retired || !this.open) return false;
    this.ws.send(text);
    return true;
  }

  sendBinary(bytes: ArrayBuffer): boolean {
    if (this.retired || !this.open) return false;
    this.ws.send(bytes);
    return true;
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === WebSocket.CLOSING || this.ws.readyState === WebSocket.CLOSED) return;
    try {
      this.ws.close(code, reason.slice(0, 120));
    } catch {
      this.ws.close();
    }
  }

  /** Closes cleanly (1000 unless told otherwise) and ignores everything from now on. */
  retire(code = 1000, reason = 'client closed'): void {
    this.retired = true;
    this.close(code, reason);
  }
}

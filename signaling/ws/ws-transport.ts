import type { WebSocket } from 'ws';
import type { ServerFrame } from '../frames/server.ts';
import type { Transport } from '../../session/transport.ts';

/** The session core's Transport over one `ws` socket. */
export class WebSocketTransport implements Transport {
  constructor(private readonly ws: WebSocket) {}

  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  sendFrame(frame: ServerFrame): void {
    if (this.open) this.ws.send(JSON.stringify(frame));
  }

  sendAudio(bytes: Uint8Array): void {
    if (this.open) this.ws.send(bytes, { binary: true });
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === this.ws.CONNECTING || this.open) this.ws.close(code, reason);
  }
}

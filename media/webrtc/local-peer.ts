import type { CallPeer, CallPeerOptions } from './call-peer.ts';
import { MEDIA_RATE } from './opus.ts';
import { OpusFrameEncoder } from './opus-encoder.ts';
import { ServerPeer } from './server-peer.ts';

/**
 * A call whose peer connection runs on the main thread (WEBRTC_MEDIA_WORKERS=0): simplest, and
 * what a handful of calls needs; everything shares the event loop with the sessions.
 */
export class LocalPeer implements CallPeer {
  private readonly peer: ServerPeer;
  private readonly encoder = new OpusFrameEncoder(MEDIA_RATE);

  constructor(options: CallPeerOptions) {
    this.peer = new ServerPeer(options);
  }

  get controlOpen(): boolean {
    return this.peer.controlOpen;
  }

  answer(sdp: string): Promise<string> {
    return this.peer.answer(sdp);
  }

  sendFrame(frame: Int16Array): void {
    this.peer.sendPacket(this.encoder.encode(frame));
  }

  sendControl(text: string): boolean {
    return this.peer.sendControl(text);
  }

  close(): Promise<void> {
    return this.peer.close();
  }
}

import { libraryError, RealtimeError } from '../errors.ts';
import { WebRtcLink, type IceServerEntry, type WebRtcHost } from './webrtc-link.ts';

type Frame = { type: string } & Record<string, unknown>;

/**
 * The WebRTC call of a conversation link, when the transport is WebRTC: at most one peer at a
 * time, started on webrtc_ice (a new one replaces the old), answered on webrtc_answer, ended with
 * the link. The link's state machine decides when; this holds the peer.
 */
export class RtcCall {
  private link: WebRtcLink | undefined;

  constructor(private readonly host: WebRtcHost) {}

  get started(): boolean {
    return this.link !== undefined;
  }

  /** Media flows: the call lives on the peer connection, even without its signaling socket. */
  get connected(): boolean {
    return this.link?.connected === true;
  }

  get peerConnection(): RTCPeerConnection | undefined {
    return this.link?.peerConnection;
  }

  /** Over the control channel when it is open; false otherwise. */
  send(text: string): boolean {
    return this.link?.send(text) ?? false;
  }

  /** webrtc_ice: a peer with these ICE servers offers; `fail` hears a failure to do so. */
  start(iceServers: IceServerEntry[] | undefined, fail: (error: RealtimeError) => void): void {
    this.close();
    const link = new WebRtcLink(this.host);
    this.link = link;
    link.start(iceServers ?? []).catch((error: unknown) => fail(asRtcError(error)));
  }

  /** webrtc_answer: applies the server's answer to the peer that offered. */
  answer(frame: Frame, fail: (error: RealtimeError) => void): void {
    this.link?.applyAnswer(String(frame.sdp ?? ''), frame.ice_servers as IceServerEntry[] | undefined).catch((error: unknown) => fail(asRtcError(error)));
  }

  async setMicTrack(track: MediaStreamTrack | null): Promise<void> {
    await this.link?.setMicTrack(track);
  }

  async unlock(): Promise<void> {
    await this.link?.unlock();
  }

  close(): void {
    this.link?.close();
    this.link = undefined;
  }
}

function asRtcError(error: unknown): RealtimeError {
  return error instanceof RealtimeError ? error : libraryError('webrtc_failed', error instanceof Error ? error.message : String(error), true);
}

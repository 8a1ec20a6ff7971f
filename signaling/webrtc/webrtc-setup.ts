import { OfferError, type CallPeer, type CallPeerOptions } from '../../media/webrtc/call-peer.ts';
import { LocalPeer } from '../../media/webrtc/local-peer.ts';
import { WebRtcTransport, type SignalingLink } from './webrtc-transport.ts';
import { MEDIA_RATE } from '../../media/webrtc/opus.ts';
import type { Session } from '../../session/session.ts';
import type { ServerContext } from '../context.ts';
import type { WsErrorCode } from '../../session/protocol/errors.ts';
import { iceServersFor } from './ice-servers.ts';
import { workerPoolFor } from './media-workers.ts';
import type { PreparedSession } from '../ws/open-session.ts';

export interface WebRtcHooks {
  sendError(code: WsErrorCode, detail: string): void;
  /** The call is connected and its session built: the connection takes it over. */
  onSession(session: Session, transport: WebRtcTransport): void;
  /** Uplink control text from the data channel, within the frame size limit. */
  onControl(text: string): void;
  /** The peer connection failed or closed. */
  onGone(): void;
}

/**
 * Signaling for one WebRTC call (SPEC): webrtc_ice right after start, then one offer answered
 * with webrtc_answer; once the peer is connected the session is built on the WebRTC transport
 * and `ready` is sent. A malformed offer or one without audio is refused and another may be
 * sent; a second offer after a successful one is refused.
 */
export class WebRtcSetup {
  private peer: CallPeer | undefined;
  private answered = false;
  private session: Session | undefined;
  private offeredAt = 0;

  constructor(
    private readonly server: ServerContext,
    private readonly sessionId: string,
    private readonly prepared: PreparedSession,
    private readonly signaling: SignalingLink,
    private readonly hooks: WebRtcHooks,
  ) {
    this.signaling.sendFrame({ type: 'webrtc_ice', ice_servers: iceServersFor(server.config, sessionId) });
  }

  get connected(): boolean {
    return this.session !== undefined;
  }

  async offer(sdp: string): Promise<void> {
    if (this.answered || this.peer) {
      return this.hooks.sendError('invalid_offer', 'an offer was already received for this call; one offer per call');
    }
    const { config } = this.server;
    this.offeredAt = performance.now();
    const options: CallPeerOptions = {
      // STUN only: the server has its own address; TURN relays are for clients behind NAT, and an
      // unreachable entry here would stall gathering.
      iceServers: iceServersFor(config, this.sessionId).filter((s) => s.username === undefined),
      additionalHostAddresses: ['127.0.0.1', ...(config.WEBRTC_PUBLIC_IP ? [config.WEBRTC_PUBLIC_IP] : [])],
      loopbackOnly: config.WEBRTC_LOOPBACK_ONLY,
      portRange: config.WEBRTC_PORT_MIN && config.WEBRTC_PORT_MAX ? [config.WEBRTC_PORT_MIN, config.WEBRTC_PORT_MAX] : undefined,
      onAudio: (frame) => this.session?.handlePcm(frame),
      onControl: (text) => this.onControl(text),
      onControlOpen: () => undefined,
      onConnected: () => this.onConnected(peer),
      onGone: () => this.hooks.onGone(),
    };
    const peer: CallPeer = config.WEBRTC_MEDIA_WORKERS > 0 ? workerPoolFor(config, this.server.log).createPeer(options) : new LocalPeer(options);
    this.peer = peer;
    let answer: string;
    try {
      answer = await peer.answer(sdp);
    } catch (error) {
      this.peer = undefined;
      void peer.close();
      const detail = error instanceof OfferError ? error.message : 'the offer could not be answered';
      return this.hooks.sendError('invalid_offer', `${detail}; send a corrected webrtc_offer`);
    }
    this.answered = true;
    this.signaling.sendFrame({ type: 'webrtc_answer', sdp: answer });
  }

  close(): void {
    void this.peer?.close();
  }

  private onConnected(peer: CallPeer): void {
    const { metrics } = this.server.observability;
    metrics.webrtcConnect.observe((performance.now() - this.offeredAt) / 1000);
    const transport = new WebRtcTransport(peer, this.signaling, this.prepared.settings.backgroundAudio, metrics);
    // Opus both ways at the media rate; the session sees plain PCM16 and resamples nothing.
    this.session = this.prepared.build(transport, { inputRate: MEDIA_RATE, outputRate: MEDIA_RATE, encoding: 'pcm16' });
    this.hooks.onSession(this.session, transport);
  }

  /** The socket's frame limit holds here too; nothing a peer sends may throw out of its event handler. */
  private onControl(text: string): void {
    const { MAX_FRAME_BYTES } = this.server.config;
    if (text.length > MAX_FRAME_BYTES) {
      return this.hooks.sendError('frame_too_large', `control message of ${text.length} characters exceeds MAX_FRAME_BYTES (${MAX_FRAME_BYTES})`);
    }
    try {
      this.hooks.onControl(text);
    } catch (error) {
      this.server.log.error({ err: error instanceof Error ? error.stack : String(error) }, 'control frame handling failed');
    }
  }
}

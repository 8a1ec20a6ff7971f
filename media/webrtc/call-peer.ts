/**
 * The server's side of one WebRTC call as the transport and the signaling see it, wherever the
 * peer connection actually runs: on the main thread (local-peer.ts) or in a media worker thread
 * (worker-peer.ts, the default: werift's per-packet work and garbage then stay off the event
 * loop that paces the downlink).
 */
export interface IceServerEntry {
  urls: string | string[];
  username?: string;
  credential?: string;
}

export interface CallPeerConfig {
  iceServers: IceServerEntry[];
  /** Extra host addresses to gather on (loopback for local tests, a public IP bound here). */
  additionalHostAddresses: string[];
  portRange: [number, number] | undefined;
  /** Use only loopback candidate pairs (tests and single-machine setups). */
  loopbackOnly?: boolean;
}

export interface CallPeerEvents {
  /** Decoded uplink audio: PCM16 mono at MEDIA_RATE (16 kHz), one 20 ms frame at a time. */
  onAudio(frame: Int16Array): void;
  /** A text message on the `control` data channel. */
  onControl(text: string): void;
  onControlOpen(): void;
  /** The `control` channel closed while the call may go on (frames fall back to the socket). */
  onControlClosed?(): void;
  onConnected(): void;
  /** The peer connection failed or closed. */
  onGone(): void;
}

export type CallPeerOptions = CallPeerConfig & CallPeerEvents;

export interface CallPeer {
  readonly controlOpen: boolean;
  /** Set when the peer paces packets itself: how far ahead frames should be handed over. */
  readonly downlinkLeadMs?: number;
  /**
   * Set with downlinkLeadMs: how far ahead of its play time the peer really sends a frame (the
   * burst that opens a talk spurt). Frames handed over further ahead are still held here.
   */
  readonly sendAheadMs?: number;
  /** Drops frames handed over but not sent yet (barge-in). */
  discardAudio?(): void;
  /** Holds frames handed over but not sent yet (a possible barge-in), until resume or discard. */
  pauseAudio?(): void;
  resumeAudio?(): void;
  /** Applies the offer and resolves with the answer SDP once gathering is complete. */
  answer(sdp: string): Promise<string>;
  /** One 20 ms frame of MEDIA_RATE PCM16 → one Opus RTP packet: sent now, or at its slot when the peer paces. */
  sendFrame(frame: Int16Array): void;
  /** A text message on `control`; false when the channel is not open. */
  sendControl(text: string): boolean;
  close(): Promise<void>;
}

export class OfferError extends Error {
  override name = 'OfferError';
}

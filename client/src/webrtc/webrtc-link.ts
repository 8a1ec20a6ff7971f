import { libraryError } from '../errors.ts';

export interface IceServerEntry {
  urls: string | string[];
  username?: string;
  credential?: string;
}

export interface WebRtcHost {
  /** Sends a signaling frame (webrtc_offer) over the WebSocket. */
  signal(frame: { type: 'webrtc_offer'; sdp: string }): boolean;
  /** A JSON frame that arrived on the `control` data channel. */
  controlFrame(frame: { type: string } & Record<string, unknown>): void;
  /** The peer connection failed or closed for good. */
  failed(detail: string): void;
  /** The current microphone track, if capture is running. */
  micTrack(): MediaStreamTrack | undefined;
}

/** How long to wait for ICE gathering before offering with what we have (no trickle in SPEC). */
const GATHER_TIMEOUT_MS = 2000;

/**
 * The experimental WebRTC transport, client side: built only after webrtc_ice, with those ICE
 * servers; one audio transceiver (the mic track, swapped in later with replaceTrack so capture
 * can start after the call), the `control` data channel for JSON frames, a non-trickle offer
 * sent as webrtc_offer, and the answer applied from webrtc_answer. The remote track plays
 * through an <audio> element at volume 1 (unity gain).
 */
export class WebRtcLink {
  private pc: RTCPeerConnection | undefined;
  private control: RTCDataChannel | undefined;
  private sender: RTCRtpSender | undefined;
  private audioEl: HTMLAudioElement | undefined;
  private closed = false;

  constructor(private readonly host: WebRtcHost) {}

  get controlOpen(): boolean {
    return this.control?.readyState === 'open';
  }

  /** True once media flows; while it does, the call survives a lost signaling socket. */
  get connected(): boolean {
    return this.pc?.connectionState === 'connected';
  }

  get peerConnection(): RTCPeerConnection | undefined {
    return this.pc;
  }

  /** Handles webrtc_ice: builds the peer connection and sends the offer. */
  async start(iceServers: IceServerEntry[]): Promise<void> {
    if (this.pc) throw libraryError('webrtc_failed', 'webrtc_ice arrived twice');
    const pc = new RTCPeerConnection({ iceServers: iceServers as RTCIceServer[] });
    this.pc = pc;
    const transceiver = pc.addTransceiver('audio', { direction: 'sendrecv' });
    this.sender = transceiver.sender;
    const mic = this.host.micTrack();
    if (mic) await this.sender.replaceTrack(mic);
    this.control = pc.createDataChannel('control', { ordered: true });
    this.control.onmessage = (event) => this.onControlMessage(event.data);
    pc.ontrack = (event) => this.play(event.streams[0] ?? new MediaStream([event.track]));
    pc.onconnectionstatechange = () => {
      if (this.closed) return;
      if (pc.connectionState === 'failed' || pc.connectionState === 'closed') this.host.failed(`peer connection ${pc.connectionState}`);
    };
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    await waitForGathering(pc, GATHER_TIMEOUT_MS);
    if (this.closed) return;
    const sdp = pc.localDescription?.sdp ?? offer.sdp ?? '';
    if (!this.host.signal({ type: 'webrtc_offer', sdp })) throw libraryError('webrtc_failed', 'the signaling socket closed before the offer', true);
  }

  /** Handles webrtc_answer. */
  async applyAnswer(sdp: string, iceServers?: IceServerEntry[]): Promise<void> {
    const pc = this.pc;
    if (!pc) throw libraryError('webrtc_failed', 'webrtc_answer before webrtc_ice');
    if (iceServers?.length) pc.setConfiguration({ ...pc.getConfiguration(), iceServers: iceServers as RTCIceServer[] });
    await pc.setRemoteDescription({ type: 'answer', sdp });
  }

  /** Swaps the microphone track in (or out, with null) without renegotiating. */
  async setMicTrack(track: MediaStreamTrack | null): Promise<void> {
    await this.sender?.replaceTrack(track);
  }

  send(text: string): boolean {
    if (!this.controlOpen) return false;
    this.control!.send(text);
    return true;
  }

  /** Inside a user gesture: lets the remote audio start under autoplay policies. */
  async unlock(): Promise<void> {
    await this.audioEl?.play().catch(() => undefined);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.control?.close();
    this.pc?.close();
    if (this.audioEl) {
      this.audioEl.pause();
      this.audioEl.srcObject = null;
      this.audioEl.remove();
    }
  }

  private onControlMessage(data: unknown): void {
    if (typeof data !== 'string') return;
    try {
      const frame: unknown = JSON.parse(data);
      if (typeof frame === 'object' && frame !== null && typeof (frame as { type?: unknown }).type === 'string') {
        this.host.controlFrame(frame as { type: string } & Record<string, unknown>);
      }
    } catch {
      // not JSON: ignored, as on the WebSocket
    }
  }

  private play(stream: MediaStream): void {
    if (typeof document === 'undefined') return;
    this.audioEl ??= document.createElement('audio');
    this.audioEl.autoplay = true;
    this.audioEl.volume = 1;
    this.audioEl.srcObject = stream;
    void this.audioEl.play().catch(() => undefined);
  }
}

function waitForGathering(pc: RTCPeerConnection, timeoutMs: number): Promise<void> {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, timeoutMs);
    function done(): void {
      clearTimeout(timer);
      pc.removeEventListener('icegatheringstatechange', check);
      resolve();
    }
    function check(): void {
      if (pc.iceGatheringState === 'complete') done();
    }
    pc.addEventListener('icegatheringstatechange', check);
  });
}

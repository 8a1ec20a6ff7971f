import type { ServerFrame } from '../../session/protocol/server.ts';
import type { Transport } from '../../session/transport.ts';
import { sharedPacerClock, type Ticking } from '../../media/pacer-clock.ts';
import { Pcm16Reader } from '../../media/pcm.ts';
import { BackgroundBed } from '../../media/webrtc/background-bed.ts';
import { MEDIA_FRAME_SAMPLES, MEDIA_RATE } from '../../media/webrtc/opus.ts';
import type { CallPeer } from '../../media/webrtc/call-peer.ts';
import { errorCodeLabel, type ParleyMetrics } from '../observability/metrics.ts';
import type { FineHistogram } from '../observability/fine-histogram.ts';

/** The signaling socket, while it lasts: frames fall back to it until `control` opens. */
export interface SignalingLink {
  readonly open: boolean;
  sendFrame(frame: ServerFrame): void;
  close(code: number, reason: string): void;
}

/**
 * The session core's Transport over a WebRTC call. Frames go on the `control` data channel once
 * it is open, otherwise on the signaling socket. Audio arrives as 20 ms PCM16 frames at MEDIA_RATE
 * (the session is configured for that on this transport) and leaves as Opus RTP; with the
 * background bed on, the bed is mixed under speech and fills the silences, so RTP flows for the
 * whole call.
 */
export class WebRtcTransport implements Transport, Ticking {
  private readonly reader = new Pcm16Reader();
  private readonly bed: BackgroundBed | undefined;
  private lastFrameAt = 0;
  private paused = false;
  private closed = false;
  /** The close code the server chose, if it ended the call (the peer's own end has none). */
  closeCode: number | undefined;
  /** The session pacer's lateness: on the wire, or (a media worker paces the RTP) only the handoff. */
  private readonly lateness: FineHistogram;

  constructor(
    private readonly peer: CallPeer,
    private readonly signaling: SignalingLink,
    backgroundAudio: boolean,
    private readonly metrics: ParleyMetrics,
  ) {
    this.lateness = peer.downlinkLeadMs === undefined ? metrics.downlinkLateness.of('webrtc') : metrics.handoffLateness.of();
    if (backgroundAudio) {
      this.bed = new BackgroundBed(MEDIA_RATE);
      this.lastFrameAt = performance.now();
      sharedPacerClock.add(this);
    }
  }

  get downlinkLeadMs(): number | undefined {
    return this.peer.downlinkLeadMs;
  }

  get sendAheadMs(): number | undefined {
    return this.peer.sendAheadMs;
  }

  discardAudio(): void {
    this.paused = false;
    this.peer.discardAudio?.();
  }

  pacedLate(ms: number): void {
    this.lateness.record(ms);
  }

  /** While paused the bed stops too: its frames would queue behind the held speech. */
  pauseAudio(): void {
    this.paused = true;
    this.peer.pauseAudio?.();
  }

  resumeAudio(): void {
    this.paused = false;
    this.lastFrameAt = performance.now();
    this.peer.resumeAudio?.();
  }

  sendFrame(frame: ServerFrame): void {
    if (this.closed) return;
    const text = JSON.stringify(frame);
    if (this.peer.sendControl(text)) {
      if (frame.type === 'error') this.metrics.errors.inc({ code: errorCodeLabel(frame.code) });
    } else if (this.signaling.open) {
      // The signaling socket's transport counts it.
      this.signaling.sendFrame(frame);
    }
  }

  sendAudio(bytes: Uint8Array): void {
    if (this.closed) return;
    const speech = this.reader.read(bytes);
    if (speech.length !== MEDIA_FRAME_SAMPLES) return;
    // The speech is a view of the pacer's audio (read-only): the bed mixes into a copy.
    const frame = this.bed ? speech.slice() : speech;
    this.bed?.mixInto(frame);
    this.peer.sendFrame(frame);
    this.lastFrameAt = performance.now();
  }

  /** Bed-only frames whenever no speech frame went out for a frame period. */
  tick(now: number): void {
    if (!this.bed || this.closed || this.paused) return;
    while (now - this.lastFrameAt >= 20) {
      const frame = new Int16Array(MEDIA_FRAME_SAMPLES);
      this.bed.mixInto(frame);
      this.peer.sendFrame(frame);
      this.lastFrameAt += 20;
    }
  }

  /** `bye` on the control channel just before the peer connection closes. */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.peer.sendControl(JSON.stringify({ type: 'bye', code, ...(reason ? { reason } : {}) }));
    this.closed = true;
    this.closeCode = code;
    sharedPacerClock.remove(this);
    // Give the data channel a moment to flush the bye before the transport goes.
    setTimeout(() => void this.peer.close(), 100);
    if (this.signaling.open) this.signaling.close(code, reason);
  }
}

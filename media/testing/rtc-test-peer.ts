import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket, type RTCDataChannel } from 'werift';
import { OpusFrameDecoder, OPUS_FRAME_SAMPLES } from '../webrtc/opus.ts';
import { OpusFrameEncoder } from '../webrtc/opus-encoder.ts';
import { loopbackPair } from '../webrtc/server-peer.ts';
import { Arrivals } from './arrivals.ts';
import { paced } from './realtime.ts';

/** Checks a control frame; returns what is wrong with it, or undefined. */
export type FrameCheck = (raw: unknown) => string | undefined;

/**
 * A second WebRTC peer for tests (werift, in-process): offers audio sendrecv and a `control`
 * data channel, sends Opus RTP paced like a microphone, decodes what the server sends, and
 * records control frames (each one checked by `check`, when given).
 */
export class RtcTestPeer<Frame extends { type: string } = { type: string }> {
  readonly pc: RTCPeerConnection;
  readonly control: RTCDataChannel;
  readonly frames: Frame[] = [];
  /** performance.now() at each control frame's arrival, parallel to `frames`. */
  readonly frameArrivals: number[] = [];
  readonly violations: string[] = [];
  /** Decoded downlink audio, PCM16 48 kHz. */
  readonly received: Int16Array[] = [];
  readonly packetArrivals: number[] = [];
  private readonly track = new MediaStreamTrack({ kind: 'audio' });
  private readonly encoder = new OpusFrameEncoder();
  private readonly decoder = new OpusFrameDecoder();
  private sequence = 1;
  private timestamp = 0;
  private readonly arrivals = new Arrivals();

  constructor(iceServers: { urls: string | string[] }[] = [], check?: FrameCheck) {
    this.pc = new RTCPeerConnection({
      codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2 })] },
      iceServers: iceServers.flatMap((s) => (Array.isArray(s.urls) ? s.urls : [s.urls]).map((urls) => ({ urls }))),
      iceAdditionalHostAddresses: ['127.0.0.1'],
      iceFilterCandidatePair: loopbackPair,
      // One transport for audio and control, as browsers offer: werift as offerer otherwise
      // gathers one per m-line and never closes the one BUNDLE leaves unused (3 sockets a call).
      bundlePolicy: 'max-bundle',
    });
    const transceiver = this.pc.addTransceiver(this.track, { direction: 'sendrecv' });
    transceiver.onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe((rtp) => {
        this.packetArrivals.push(performance.now());
        this.received.push(this.decoder.decode(rtp.payload));
        this.arrivals.notify();
      }),
    );
    this.control = this.pc.createDataChannel('control');
    this.control.onMessage.subscribe((data) => {
      const raw: unknown = JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
      const problem = check?.(raw);
      if (problem) this.violations.push(`${JSON.stringify(raw)}: ${problem}`);
      this.frames.push(raw as Frame);
      this.frameArrivals.push(performance.now());
      this.arrivals.notify();
    });
    this.control.stateChanged.subscribe(() => this.arrivals.notify());
  }

  async offer(): Promise<string> {
    await this.decoder.ready;
    await this.pc.setLocalDescription(await this.pc.createOffer());
    if (this.pc.iceGatheringState !== 'complete') {
      await new Promise<void>((resolve) => this.pc.iceGatheringStateChange.subscribe((s) => s === 'complete' && resolve()));
    }
    return this.pc.localDescription!.sdp;
  }

  async accept(sdp: string): Promise<void> {
    await this.pc.setRemoteDescription({ type: 'answer', sdp });
  }

  get controlOpen(): boolean {
    return this.control.readyState === 'open';
  }

  sendControl(frame: unknown): void {
    this.control.send(JSON.stringify(frame));
  }

  /** Streams 48 kHz PCM as Opus RTP in real time, 20 ms per packet. */
  async stream(samples: Int16Array, options: { drop?: (index: number) => boolean } = {}): Promise<void> {
    await paced(Math.floor(samples.length / OPUS_FRAME_SAMPLES), 20, (n) => {
      const payload = this.encoder.encode(samples.subarray(n * OPUS_FRAME_SAMPLES, (n + 1) * OPUS_FRAME_SAMPLES));
      const header = new RtpHeader({ payloadType: 111, sequenceNumber: this.sequence, timestamp: this.timestamp });
      this.sequence = (this.sequence + 1) & 0xffff;
      this.timestamp += OPUS_FRAME_SAMPLES;
      if (!options.drop?.(n)) this.track.writeRtp(new RtpPacket(header, Buffer.from(payload)));
    });
  }

  /** The first control frame of this type that matches, on its arrival. */
  waitFor<T extends Frame['type']>(type: T, predicate: (f: Extract<Frame, { type: T }>) => boolean = () => true, timeoutMs = 8000): Promise<Extract<Frame, { type: T }>> {
    const find = () => this.frames.find((f): f is Extract<Frame, { type: T }> => f.type === type && predicate(f as Extract<Frame, { type: T }>));
    return this.arrivals.until(find, timeoutMs, () => `${type} on control; got ${this.frames.map((f) => f.type).join(',')}`);
  }

  /** Resolves once `count` downlink packets were decoded. */
  async waitReceived(count: number, timeoutMs = 8000): Promise<void> {
    await this.arrivals.until(() => (this.received.length >= count ? true : undefined), timeoutMs, () => `${count} downlink packets; got ${this.received.length}`);
  }

  async waitControlOpen(timeoutMs = 8000): Promise<void> {
    await this.arrivals.until(() => (this.controlOpen ? true : undefined), timeoutMs, () => 'the control channel to open');
  }

  receivedMs(): number {
    return (this.received.reduce((n, f) => n + f.length, 0) / 48000) * 1000;
  }

  assertProtocol(): void {
    if (this.violations.length) throw new Error(`protocol violations on control:\n${this.violations.join('\n')}`);
  }

  async close(): Promise<void> {
    this.decoder.free();
    await this.pc.close();
  }
}

import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket } from 'werift';
import { OPUS_FRAME_SAMPLES } from './opus.ts';
import { loopbackPair, ServerPeer } from './server-peer.ts';

/** 20 ms of Opus silence (TOC 0xf8: CELT fullband, mono, one frame), what browsers send in a pause. */
const SILENCE = Uint8Array.of(0xf8, 0xff, 0xfe);
/** Packets each way, at once when both sides are connected: the jitter buffer (3 deep) releases some. */
const PACKETS = 6;
/** Then one more each way this often until the call is done (a packet lost on the way). */
const RESEND_MS = 20;

/**
 * One call from this thread to itself on 127.0.0.1, with the server's side the real ServerPeer:
 * ICE checks, the DTLS handshake as DTLS server (its ECDHE in werift's pure-JavaScript curves),
 * the SCTP association and the `control` channel, SRTP both ways and the uplink decoder, then
 * both closed. A media worker runs it before it says ready, so the JIT compilation and lazy set-up
 * of all of it happen there, not in the first real call (measured: bench/results-rtc.md).
 *
 * Resolves with its duration in ms; rejects when it fails or takes longer than `timeoutMs`.
 * Either way both peers are closed when it settles, leaving no socket or timer of theirs behind.
 */
export async function warmUpCall(timeoutMs: number): Promise<number> {
  const started = performance.now();
  const call = new LoopbackCall();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the warm-up call did not finish within ${timeoutMs} ms (${call.stage})`)), timeoutMs);
  });
  try {
    await Promise.race([call.run(), late]);
    return performance.now() - started;
  } finally {
    clearTimeout(timer);
    await call.close();
  }
}

class LoopbackCall {
  /** Where the call got to, for the timeout's message. */
  stage = 'offer';
  private readonly track = new MediaStreamTrack({ kind: 'audio' });
  private readonly client = new RTCPeerConnection({
    codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2 })] },
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceFilterCandidatePair: loopbackPair,
    iceUseIpv4: false,
    iceUseIpv6: false,
    // One transport for audio and control: werift as offerer otherwise gathers one per m-line
    // and never closes the one BUNDLE leaves unused (its socket would outlive the call).
    bundlePolicy: 'max-bundle',
  });
  private readonly done: Promise<void>;
  private server: ServerPeer | undefined;
  private media: NodeJS.Timeout | undefined;
  private sent = 0;

  constructor() {
    let uplink = 0;
    let downlink = 0;
    let pong = false;
    let finish!: () => void;
    let fail!: (error: Error) => void;
    this.done = new Promise((resolve, reject) => ((finish = resolve), (fail = reject)));
    // run() awaits it only once answered: a failure before that must not be an unhandled
    // rejection (in a worker thread that would end the thread, and the server's start with it).
    this.done.catch(() => undefined);
    const check = (): void => {
      if (uplink > 0 && downlink >= PACKETS && pong) finish();
    };
    let connected = 0;
    // Media flows once both ends are connected (each side's SRTP keys exist only then).
    const bothConnected = (): void => {
      connected += 1;
      if (connected < 2) return;
      this.stage = 'media';
      for (let i = 0; i < PACKETS; i += 1) this.sendMedia();
      this.media = setInterval(() => this.sendMedia(), RESEND_MS);
    };
    this.client.connectionStateChange.subscribe((state) => state === 'connected' && bothConnected());
    this.client.addTransceiver(this.track, { direction: 'sendrecv' }).onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe(() => {
        downlink += 1;
        check();
      }),
    );
    const control = this.client.createDataChannel('control');
    control.stateChanged.subscribe((state) => state === 'open' && control.send('{"type":"ping"}'));
    control.onMessage.subscribe(() => {
      pong = true;
      check();
    });
    this.server = new ServerPeer({
      iceServers: [],
      additionalHostAddresses: ['127.0.0.1'],
      portRange: undefined,
      loopbackOnly: true,
      onAudio: () => {
        uplink += 1;
        check();
      },
      onControl: () => this.server?.sendControl('{"type":"pong"}'),
      onControlOpen: () => undefined,
      onConnected: bothConnected,
      onGone: () => fail(new Error(`the warm-up call's server side closed (${this.stage})`)),
    });
  }

  async run(): Promise<void> {
    await this.client.setLocalDescription(await this.client.createOffer());
    await new Promise<void>((resolve) => {
      if (this.client.iceGatheringState === 'complete') return resolve();
      this.client.iceGatheringStateChange.subscribe((state) => state === 'complete' && resolve());
    });
    this.stage = 'answer';
    const answer = await this.server!.answer(this.client.localDescription!.sdp);
    this.stage = 'connecting';
    await this.client.setRemoteDescription({ type: 'answer', sdp: answer });
    await this.done;
  }

  /** One packet each way. */
  private sendMedia(): void {
    this.server?.sendPacket(SILENCE);
    const header = new RtpHeader({ payloadType: 111, sequenceNumber: this.sent + 1, timestamp: this.sent * OPUS_FRAME_SAMPLES });
    this.track.writeRtp(new RtpPacket(header, Buffer.from(SILENCE)));
    this.sent += 1;
  }

  async close(): Promise<void> {
    clearInterval(this.media);
    await Promise.all([this.server?.close(), this.client.close().catch(() => undefined)]);
  }
}

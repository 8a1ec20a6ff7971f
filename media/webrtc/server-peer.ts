import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket, type RTCDataChannel } from 'werift';
import { randomInt } from 'node:crypto';
import type { CallPeerOptions } from './call-peer.ts';
import { OfferError } from './call-peer.ts';
import { JitterBuffer } from './jitter-buffer.ts';
import { answerAsDtlsServer, unifyBundleCredentials } from './offer-sdp.ts';
import { MEDIA_FRAME_SAMPLES, MEDIA_RATE, OPUS_FRAME_SAMPLES, OpusFrameDecoder } from './opus.ts';
import { sharedPacerClock } from '../pacer-clock.ts';
import { PacketPacer } from './packet-pacer.ts';
import { mediaStats } from '../media-stats.ts';
import { UplinkStats } from './uplink-stats.ts';

export type { IceServerEntry } from './call-peer.ts';
export { OfferError } from './call-peer.ts';

/**
 * The server's side of one WebRTC call (werift): answers the client's offer, decodes uplink
 * Opus through a small jitter buffer, sends downlink Opus packets as RTP (sequence and timestamp
 * are ours: +960 per 20 ms), and carries the `control` data channel. It never encodes (see
 * opus-encoder.ts), so it can run in a media worker thread.
 */
export class ServerPeer {
  private readonly pc: RTCPeerConnection;
  private readonly track = new MediaStreamTrack({ kind: 'audio' });
  private readonly decoder = new OpusFrameDecoder(MEDIA_RATE);
  private readonly jitter = new JitterBuffer(3);
  private control: RTCDataChannel | undefined;
  private payloadType = 111;
  private sequence = randomInt(0, 0xffff);
  private timestamp = randomInt(0, 0x7fffffff);
  private connected = false;
  private closed = false;
  private lastSentAt: number | undefined;
  /** For packets handed over ahead of time (queuePacket); sendPacket bypasses it. */
  private readonly pacer = new PacketPacer(sharedPacerClock, (packet) => this.sendPacket(packet), (ms) => mediaStats().rtpLate(ms));
  private readonly uplink = new UplinkStats();
  private packetsSent = 0;

  constructor(private readonly options: CallPeerOptions) {
    this.pc = new RTCPeerConnection({
      codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2 })] },
      // An empty list, not the default: gathering must not wait on an unreachable STUN server.
      iceServers: options.iceServers.flatMap((s) => (Array.isArray(s.urls) ? s.urls : [s.urls]).map((urls) => ({ urls, username: s.username, credential: s.credential }))),
      iceAdditionalHostAddresses: options.additionalHostAddresses,
      icePortRange: options.portRange,
      // Loopback only: gather 127.0.0.1 alone (the additional address) instead of binding a
      // socket on every interface whose pairs would be filtered out anyway.
      ...(options.loopbackOnly ? { iceFilterCandidatePair: loopbackPair, iceUseIpv4: false, iceUseIpv6: false } : {}),
    });
    this.pc.onDataChannel.subscribe((channel) => {
      if (channel.label !== 'control') return;
      this.control = channel;
      channel.onMessage.subscribe((data) => options.onControl(typeof data === 'string' ? data : Buffer.from(data).toString('utf8')));
      if (channel.readyState === 'open') options.onControlOpen();
      channel.stateChanged.subscribe((state) => {
        if (state === 'open') options.onControlOpen();
        else if (state === 'closed') options.onControlClosed?.();
      });
    });
    this.pc.onTrack.subscribe((track) => {
      track.onReceiveRtp.subscribe((rtp) => this.onRtp(rtp.header.sequenceNumber, rtp.header.timestamp, rtp.payload));
    });
    this.pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected' && !this.connected) {
        this.connected = true;
        options.onConnected();
      } else if ((state === 'failed' || state === 'closed' || state === 'disconnected') && !this.closed) {
        if (state === 'disconnected') return;
        this.closed = true;
        options.onGone();
      }
    });
  }

  get controlOpen(): boolean {
    return this.control?.readyState === 'open';
  }

  /** Applies the offer and returns the answer SDP once gathering is complete. */
  async answer(sdp: string): Promise<string> {
    if (!/^m=audio /m.test(sdp)) throw new OfferError('the offer has no audio section (m=audio)');
    await this.decoder.ready;
    try {
      await this.pc.setRemoteDescription({ type: 'offer', sdp: unifyBundleCredentials(sdp) });
    } catch (error) {
      throw new OfferError(`the offer could not be applied: ${error instanceof Error ? error.message : String(error)}`);
    }
    keepNoRetransmissionHistory(this.pc.addTrack(this.track));
    const answer = await this.pc.createAnswer();
    await this.pc.setLocalDescription({ type: 'answer', sdp: answerAsDtlsServer(sdp, answer.sdp) });
    await this.gathered();
    const transceiver = this.pc.getTransceivers().find((t) => t.kind === 'audio');
    this.payloadType = transceiver?.codecs.find((c) => c.mimeType.toLowerCase() === 'audio/opus')?.payloadType ?? this.payloadType;
    const local = this.pc.localDescription?.sdp;
    if (!local) throw new OfferError('no answer could be made for this offer');
    return local;
  }

  /**
   * One Opus packet (20 ms) → one RTP packet. After a silence with no packets the timestamp
   * jumps by the time that passed and the marker bit opens the talkspurt (RFC 3551), so the
   * receiver's jitter buffer sees the gap as a gap, not as delay.
   */
  sendPacket(packet: Uint8Array): void {
    if (!this.connected || this.closed) return;
    const now = performance.now();
    let marker = this.packetsSent === 0;
    if (this.lastSentAt !== undefined && now - this.lastSentAt > 40) {
      const silentFrames = Math.round((now - this.lastSentAt) / 20) - 1;
      this.timestamp = (this.timestamp + silentFrames * OPUS_FRAME_SAMPLES) >>> 0;
      marker = true;
    }
    this.lastSentAt = now;
    const header = new RtpHeader({ payloadType: this.payloadType, sequenceNumber: this.sequence, timestamp: this.timestamp, marker });
    this.track.writeRtp(new RtpPacket(header, Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength)));
    this.sequence = (this.sequence + 1) & 0xffff;
    this.timestamp = (this.timestamp + OPUS_FRAME_SAMPLES) >>> 0;
    this.packetsSent += 1;
  }

  /** A packet to send at its 20 ms slot (see PacketPacer), not now. */
  queuePacket(packet: Uint8Array): void {
    if (this.connected && !this.closed) this.pacer.push(packet);
  }

  /** Drops queued packets not sent yet (barge-in). */
  discardQueued(): void {
    this.pacer.clear();
  }

  /** Holds queued packets (a possible barge-in) until resumeQueued or discardQueued. */
  pauseQueued(): void {
    this.pacer.pause();
  }

  resumeQueued(): void {
    this.pacer.resume();
  }

  sendControl(text: string): boolean {
    if (!this.controlOpen) return false;
    this.control!.send(text);
    return true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pacer.clear();
    this.decoder.free();
    await this.pc.close().catch(() => undefined);
  }

  private onRtp(sequence: number, timestamp: number, payload: Buffer): void {
    this.uplink.arrived(timestamp, performance.now());
    for (const released of this.jitter.push(sequence, payload)) {
      if (released.kind === 'lost') this.uplink.lost();
      const pcm = released.kind === 'packet' ? this.decoder.decode(released.payload) : new Int16Array(MEDIA_FRAME_SAMPLES);
      if (pcm.length > 0) this.options.onAudio(pcm);
    }
  }

  private gathered(): Promise<void> {
    if (this.pc.iceGatheringState === 'complete') return Promise.resolve();
    return new Promise((resolve) => {
      const { unSubscribe } = this.pc.iceGatheringStateChange.subscribe((state) => {
        if (state === 'complete') {
          unSubscribe();
          resolve();
        }
      });
    });
  }
}

/**
 * werift keeps the last 128 RTP packets of every sender for NACK retransmission. Nobody NACKs
 * audio here (the answer negotiates no nack feedback for Opus, and a retransmitted packet would
 * come too late for speech anyway), but the cache made every sent packet outlive a young-generation
 * collection: at 50 calls it was most of what the media worker promoted to the old generation,
 * which made its scavenges several times longer. Writes to the cache are dropped instead.
 */
function keepNoRetransmissionHistory(sender: object): void {
  const history = new Proxy<unknown[]>([], { set: () => true });
  Object.defineProperty(sender, 'rtpCache', { get: () => history, set: () => undefined, configurable: true });
}

/** Keeps connectivity checks on 127.0.0.1 at both ends. */
export function loopbackPair(pair: { remoteCandidate: { host: string }; protocol: { localCandidate?: { host: string } } }): boolean {
  return pair.remoteCandidate.host === '127.0.0.1' && pair.protocol.localCandidate?.host === '127.0.0.1';
}

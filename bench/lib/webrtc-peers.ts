import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket, type RTCDataChannel } from 'werift';
import WebSocket from 'ws';
import { loopbackPair } from '../../media/webrtc/server-peer.ts';
import { OPUS_FRAME_SAMPLES } from '../../media/webrtc/opus.ts';
import { OpusFrameEncoder } from '../../media/webrtc/opus-encoder.ts';
import { concat } from '../../media/testing/audio-stream.ts';
import { endAligned, fixture, tone } from './audio.ts';
import { LEAD_PACKETS, SPURT_GAP_MS } from './wire-capture.ts';

/**
 * The WebRTC benchmark's load generator, run as its own process (fork with IPC, see
 * bench/webrtc.ts) so the client peers' werift cost (DTLS, SRTP, SCTP) is not on the bench
 * process's or the server's event loop. It is lighter than signaling/testing/webrtc-test-peer.ts
 * on purpose, with the same peer-connection configuration: the uplink Opus packets are encoded
 * once at start and replayed (no per-call encoder), and the downlink is not decoded, only its
 * packet arrival times kept.
 *
 * Jitter: |inter-arrival − 20 ms| of downlink RTP packets within a talk spurt, from its 5th
 * packet on (the server's pacer sends a 60 ms lead at once). A spurt starts after a gap of more
 * than 150 ms; more spurts than `turn` frames means the server paused for over 150 ms inside a
 * reply (counted as `splitSpurts`).
 */

export type PeerCommand =
  | { cmd: 'open'; count: number; wsUrl: string; apiKey: string; prefix: string }
  | { cmd: 'record' }
  | { cmd: 'stop' }
  | { cmd: 'close' };

export interface PeerStats {
  deviations: number[];
  packets: number;
  turns: number;
  spurts: number;
  cpuMs: number;
  wallMs: number;
  lagP99: number;
  lagMax: number;
}

export type PeerReply = { ok: true; opened?: number; stats?: PeerStats } | { ok: false; error: string };

/** Uplink: 6 s loop of a speech clip then room tone, 48 kHz, encoded once. */
function encodeLoop(): Buffer[] {
  const rate = 48000;
  const speech = endAligned(fixture('twelve.wav', rate), OPUS_FRAME_SAMPLES, rate);
  const pcm = concat(speech, tone(rate * 6 - speech.length, rate));
  const encoder = new OpusFrameEncoder();
  const out: Buffer[] = [];
  for (let i = 0; i + OPUS_FRAME_SAMPLES <= pcm.length; i += OPUS_FRAME_SAMPLES) out.push(Buffer.from(encoder.encode(pcm.subarray(i, i + OPUS_FRAME_SAMPLES))));
  return out;
}

class LoadPeer {
  readonly pc: RTCPeerConnection;
  readonly control: RTCDataChannel;
  private readonly track = new MediaStreamTrack({ kind: 'audio' });
  private sequence = 1;
  private timestamp = 0;
  private loopIndex: number;
  nextAt = 0;
  sending = false;
  // Downlink statistics.
  private lastAt = 0;
  private inSpurt = 0;
  private readyResolve: (() => void) | undefined;
  readonly ready: Promise<void>;

  constructor(
    private readonly loop: readonly Buffer[],
    private readonly stats: { current: PeerStats | undefined },
  ) {
    this.loopIndex = Math.floor(Math.random() * loop.length);
    this.ready = new Promise((resolve) => (this.readyResolve = resolve));
    this.pc = new RTCPeerConnection({
      codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2 })] },
      iceServers: [],
      iceAdditionalHostAddresses: ['127.0.0.1'],
      iceFilterCandidatePair: loopbackPair,
    });
    const transceiver = this.pc.addTransceiver(this.track, { direction: 'sendrecv' });
    transceiver.onTrack.subscribe((track) => track.onReceiveRtp.subscribe(() => this.onPacket()));
    this.control = this.pc.createDataChannel('control');
    this.control.onMessage.subscribe((data) => this.onControl(typeof data === 'string' ? data : Buffer.from(data).toString('utf8')));
  }

  onControl(text: string): void {
    const type = /^\{"type":"([a-z_]+)"/.exec(text)?.[1];
    if (type === 'ready') this.readyResolve?.();
    else if (type === 'turn' && this.stats.current) this.stats.current.turns += 1;
  }

  private onPacket(): void {
    const now = performance.now();
    const gap = now - this.lastAt;
    this.lastAt = now;
    const s = this.stats.current;
    if (gap > SPURT_GAP_MS) {
      this.inSpurt = 0;
      if (s) s.spurts += 1;
    }
    this.inSpurt += 1;
    if (!s) return;
    s.packets += 1;
    if (this.inSpurt > LEAD_PACKETS) s.deviations.push(Math.abs(gap - 20));
  }

  /** Sends due uplink packets (one per 20 ms). */
  tick(now: number): void {
    while (this.sending && this.nextAt <= now) {
      this.nextAt += 20;
      const header = new RtpHeader({ payloadType: 111, sequenceNumber: this.sequence, timestamp: this.timestamp });
      this.sequence = (this.sequence + 1) & 0xffff;
      this.timestamp = (this.timestamp + OPUS_FRAME_SAMPLES) >>> 0;
      const payload = this.loop[this.loopIndex] as Buffer;
      this.loopIndex = (this.loopIndex + 1) % this.loop.length;
      this.track.writeRtp(new RtpPacket(header, payload));
    }
  }

  async close(): Promise<void> {
    this.sending = false;
    await this.pc.close().catch(() => undefined);
  }
}

/** Signaling over /ws as SPEC: start (transport webrtc) → webrtc_ice → offer → answer → ready. */
async function openCall(wsUrl: string, apiKey: string, sessionId: string, loop: readonly Buffer[], stats: { current: PeerStats | undefined }): Promise<{ peer: LoadPeer; ws: WebSocket }> {
  const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
  const peer = new LoadPeer(loop, stats);
  const waiters = new Map<string, (text: string) => void>();
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    const text = String(data);
    const type = /^\{"type":"([a-z_]+)"/.exec(text)?.[1] ?? '';
    if (type === 'error') for (const w of waiters.values()) w(text);
    waiters.get(type)?.(text);
    peer.onControl(text);
  });
  ws.on('error', () => undefined);
  const next = (type: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${type} within 20 s`)), 20000);
      waiters.set(type, (text) => {
        clearTimeout(timer);
        waiters.delete(type);
        if (text.startsWith('{"type":"error"')) reject(new Error(text));
        else resolve(text);
      });
    });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const ice = next('webrtc_ice');
    ws.send(JSON.stringify({ type: 'start', session_id: sessionId, api_key: apiKey, mode: { kind: 'service', greeting: false }, audio: { sr: 48000 }, transport: { kind: 'webrtc' } }));
    await ice;
    await peer.pc.setLocalDescription(await peer.pc.createOffer());
    if (peer.pc.iceGatheringState !== 'complete') {
      await new Promise<void>((resolve) => peer.pc.iceGatheringStateChange.subscribe((s) => s === 'complete' && resolve()));
    }
    const answer = next('webrtc_answer');
    ws.send(JSON.stringify({ type: 'webrtc_offer', sdp: peer.pc.localDescription!.sdp }));
    const { sdp } = JSON.parse(await answer) as { sdp: string };
    await peer.pc.setRemoteDescription({ type: 'answer', sdp });
    await Promise.race([peer.ready, new Promise((_, reject) => setTimeout(() => reject(new Error('no ready within 20 s')), 20000))]);
    return { peer, ws };
  } catch (error) {
    ws.terminate();
    await peer.close();
    throw error;
  }
}

const calls: Array<{ peer: LoadPeer; ws: WebSocket }> = [];
const stats: { current: PeerStats | undefined } = { current: undefined };
let loop: Buffer[] | undefined;
let clock: NodeJS.Timeout | undefined;
const lag = monitorEventLoopDelay({ resolution: 1 });
let recordStart = { cpu: 0, wall: 0 };

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function startClock(): void {
  clock ??= setInterval(() => {
    const now = performance.now();
    for (const c of calls) if (c.peer.nextAt <= now) c.peer.tick(now);
  }, 1);
}

async function handle(message: PeerCommand): Promise<PeerReply> {
  switch (message.cmd) {
    case 'open': {
      loop ??= encodeLoop();
      let opened = 0;
      // A few handshakes at a time: each costs the server an ICE gathering and a DTLS handshake.
      for (let i = 0; i < message.count; i += 5) {
        const batch = Math.min(5, message.count - i);
        const made = await Promise.all(Array.from({ length: batch }, (_, j) => openCall(message.wsUrl, message.apiKey, `${message.prefix}-${calls.length + j}`, loop!, stats)));
        for (const call of made) {
          call.peer.nextAt = performance.now() + Math.random() * 20;
          call.peer.sending = true;
          calls.push(call);
          opened += 1;
        }
        startClock();
      }
      return { ok: true, opened };
    }
    case 'record':
      stats.current = { deviations: [], packets: 0, turns: 0, spurts: 0, cpuMs: 0, wallMs: 0, lagP99: 0, lagMax: 0 };
      lag.reset();
      lag.enable();
      recordStart = { cpu: cpuMs(), wall: performance.now() };
      return { ok: true };
    case 'stop': {
      const s = stats.current;
      stats.current = undefined;
      lag.disable();
      if (!s) return { ok: false, error: 'not recording' };
      s.cpuMs = cpuMs() - recordStart.cpu;
      s.wallMs = performance.now() - recordStart.wall;
      s.lagP99 = lag.percentile(99) / 1e6;
      s.lagMax = lag.max / 1e6;
      return { ok: true, stats: s };
    }
    case 'close':
      if (clock) clearInterval(clock);
      await Promise.all(calls.splice(0).map(async (c) => {
        c.ws.close(1000);
        await c.peer.close();
      }));
      return { ok: true };
  }
}

process.on('message', (message: PeerCommand) => {
  handle(message).then(
    (reply) => {
      process.send?.(reply);
      if (message.cmd === 'close') setTimeout(() => process.exit(0), 200);
    },
    (error: unknown) => process.send?.({ ok: false, error: error instanceof Error ? error.message : String(error) }),
  );
});
// The parent going away takes this process with it.
process.on('disconnect', () => process.exit(0));

import WebSocket from 'ws';
import { WebRtcTestPeer } from '../../signaling/testing/webrtc-test-peer.ts';
import { withTimeout } from './bench-client.ts';
import type { ChildServer } from './child-server.ts';

/** One WebRTC call from the werift test peer in this process, timed at each signaling step (bench/webrtc.ts, aiortc-connect.ts). */
export interface Connect {
  /** start sent → webrtc_ice received. */
  ice: number;
  /** The client's own offer (its ICE gathering), not the server's. */
  clientOffer: number;
  /** webrtc_offer sent → webrtc_answer received (the server applies the offer and gathers). */
  answer: number;
  /** webrtc_offer sent → the client's peer connection is `connected` (ICE + DTLS). */
  connected: number;
  /** webrtc_offer sent → `ready` received (the server sends it once its side is connected). */
  ready: number;
}

export async function oneCall(s: ChildServer, index: number): Promise<Connect> {
  const ws = new WebSocket(s.wsUrl, { perMessageDeflate: false });
  const peer = new WebRtcTestPeer();
  const seen = new Map<string, { at: number; text: string }>();
  const waiters = new Map<string, () => void>();
  const note = (text: string): void => {
    const at = performance.now();
    const type = /^\{"type":"([a-z_]+)"/.exec(text)?.[1] ?? '?';
    if (!seen.has(type)) seen.set(type, { at, text });
    waiters.get(type)?.();
  };
  const wait = (type: string, ms = 15000): Promise<{ at: number; text: string }> =>
    withTimeout(
      new Promise((resolve) => {
        const check = (): void => {
          const found = seen.get(type);
          if (found) resolve(found);
        };
        waiters.set(type, check);
        check();
      }),
      ms,
      type,
    );
  ws.on('message', (data, isBinary) => !isBinary && note(String(data)));
  peer.control.onMessage.subscribe((data) => note(typeof data === 'string' ? data : Buffer.from(data).toString('utf8')));
  let connectedAt: number | undefined;
  const connected = new Promise<void>((resolve) =>
    peer.pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected') {
        connectedAt ??= performance.now();
        resolve();
      }
    }),
  );
  try {
    await withTimeout(new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    }), 5000, 'socket open');
    const t0 = performance.now();
    ws.send(JSON.stringify({ type: 'start', session_id: `bench-rtc-${process.pid}-${index}`, api_key: s.apiKey, mode: { kind: 'service', greeting: false }, audio: { sr: 48000 }, transport: { kind: 'webrtc' } }));
    const ice = await wait('webrtc_ice');
    const tOffer0 = performance.now();
    const sdp = await peer.offer();
    const tOffer = performance.now();
    ws.send(JSON.stringify({ type: 'webrtc_offer', sdp }));
    const answer = await wait('webrtc_answer');
    await peer.accept((JSON.parse(answer.text) as { sdp: string }).sdp);
    await withTimeout(connected, 15000, 'connected');
    const ready = await wait('ready');
    return {
      ice: ice.at - t0,
      clientOffer: tOffer - tOffer0,
      answer: answer.at - tOffer,
      connected: (connectedAt as number) - tOffer,
      ready: ready.at - tOffer,
    };
  } finally {
    await peer.close().catch(() => undefined);
    ws.close(1000);
  }
}

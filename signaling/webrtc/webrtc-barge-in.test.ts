import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestServer, WARM_MEDIA_WORKERS, WARM_RECOGNISERS, type TestServer } from '../testing/test-server.ts';
import { WsTestClient } from '../testing/ws-test-client.ts';
import { WebRtcTestPeer } from '../testing/webrtc-test-peer.ts';
import { concat, loadFixture, roomTone } from '../../media/testing/audio-stream.ts';
import { LoopStalls } from '../../media/testing/loop-stalls.ts';
import { sid } from '../testing/conversation.ts';

/**
 * False-interruption recovery on a WebRTC call: the media worker holds packets ahead of their
 * slot, so a pause must hold them there and a resume must send them on, none lost or repeated.
 */
const REPLY = 'One two three four five six seven eight nine ten. Eleven twelve thirteen fourteen fifteen sixteen seventeen.';
/**
 * A downlink silence this long is a pause. The session and this peer share this process's event
 * loop, so a stall of it silences the wire too: each silence counts without the longest stall in it.
 */
const PAUSE_GAP_MS = 300;
/** The worker sends the last packets up to its 200 ms lead after done: they have landed once none came for this long. */
const QUIET_MS = 400;
const stalls = new LoopStalls();

let t: TestServer;
/** Packets of the reply heard with nothing played into it. */
let reference: Promise<number>;
beforeAll(async () => {
  stalls.start();
  t = await startTestServer({ ...WARM_RECOGNISERS, ...WARM_MEDIA_WORKERS, LOCAL_LLM_WORD_DELAY_MS: '10', STUN_URLS: '', WEBRTC_LOOPBACK_ONLY: '1' });
  // The plain call runs beside the tests (each waits out a 6 s reply in real time on a call of
  // its own); a failure reaches every test that awaits it.
  reference = callWith(undefined).then(async ({ ws, peer, packets }) => {
    await peer.close();
    ws.close();
    return packets;
  });
  reference.catch(() => undefined);
});
afterAll(async () => {
  stalls.stop();
  await t.stop();
});

/** A call that hears REPLY, with `sound` (16 kHz fixture) played into it 1.2 s after its first packet. */
async function callWith(sound: string | undefined) {
  const ws = await WsTestClient.open(t.wsUrl);
  ws.send({ type: 'start', session_id: sid('rtc-bi'), api_key: t.key, mode: { kind: 'service', greeting: false }, audio: { sr: 48000 }, transport: { kind: 'webrtc' } });
  await ws.waitFor('webrtc_ice');
  const peer = new WebRtcTestPeer();
  ws.send({ type: 'webrtc_offer', sdp: await peer.offer() });
  // Applying the offer and gathering took seconds beside two CPU burners (with the worker's own
  // start in it then; the server now listens with its workers ready).
  await peer.accept((await ws.waitFor('webrtc_answer', () => true, 20000)).sdp);
  await Promise.race([ws.waitFor('ready', () => true, 8000), peer.waitFor('ready')]);
  await peer.waitControlOpen();
  peer.sendControl({ type: 'inject_context', message_id: 'm1', role: 'user', text: `say ${REPLY}` });
  const turnId = (await peer.waitFor('inject_context_ack')).turn_id!;
  await peer.waitReceived(1);
  await new Promise((r) => setTimeout(r, 1200 - (performance.now() - peer.packetArrivals[0]!)));
  const soundAt = performance.now();
  if (sound) void peer.stream(concat(loadFixture(sound, 48000), roomTone(2500, 48000)));
  const done = await peer.waitFor('done', (f) => f.turn_id === turnId, 20000);
  await quiet(peer);
  const arrivals = peer.packetArrivals;
  const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]! - stalls.longestWithin(arrivals[i]!, at)).filter((ms, i) => ms > PAUSE_GAP_MS && arrivals[i]! >= soundAt);
  return { ws, peer, turnId, done, packets: peer.received.length, gaps };
}

/**
 * Resolves once no packet came for QUIET_MS of the loop running. A fixed wait could end in a
 * stall's shadow: its timer fires before the packets that waited out the stall are read.
 */
async function quiet(peer: WebRtcTestPeer): Promise<void> {
  for (;;) {
    await new Promise((r) => setTimeout(r, 50));
    // Reads of packets that arrived meanwhile run before this (the loop's poll phase).
    await new Promise((r) => setImmediate(r));
    const last = peer.packetArrivals.at(-1)!;
    const now = performance.now();
    if (now - last - stalls.longestWithin(last, now) >= QUIET_MS) return;
  }
}

describe.concurrent('WebRTC false-interruption recovery', () => {
  it('a backchannel pauses the call\'s downlink, then every held packet is sent on: as many packets as without it', async ({ expect }) => {
    const { ws, peer, done, packets, gaps } = await callWith('okay.wav');
    expect(done.status).toBe('completed');
    expect(peer.frames.filter((f) => f.type === 'interrupted')).toHaveLength(0);
    expect(gaps).toHaveLength(1);
    expect(gaps[0]!).toBeLessThanOrEqual(2000);
    expect(packets).toBe(await reference);
    await peer.close();
    ws.close();
  }, 45000);

  it('a real interruption stops the call\'s downlink and interrupts the reply', async ({ expect }) => {
    const { ws, peer, turnId, done, packets } = await callWith('name.wav');
    expect(done.status).toBe('interrupted');
    expect(await peer.waitFor('interrupted', (f) => f.turn_id === turnId)).toMatchObject({ clear: true });
    expect(packets).toBeLessThan(await reference);
    expect((await peer.waitFor('asr', (f) => f.turn_id !== turnId, 10000)).text).toBe('my name is robert');
    await peer.close();
    ws.close();
  });
});

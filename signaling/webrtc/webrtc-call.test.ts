import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, WARM_MEDIA_WORKERS, WARM_RECOGNISERS, type TestServer } from '../testing/test-server.ts';
import { WsTestClient } from '../testing/ws-test-client.ts';
import { WebRtcTestPeer } from '../testing/webrtc-test-peer.ts';
import { concat, loadFixture, roomTone } from '../../media/testing/audio-stream.ts';
import { sid } from '../testing/conversation.ts';
import { peakOf } from '../../media/pcm.ts';
import { scrape } from '../testing/prom-scrape.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ ...WARM_RECOGNISERS, ...WARM_MEDIA_WORKERS, LOCAL_LLM_WORD_DELAY_MS: '10', STUN_URLS: '', TURN_URLS: 'turn:127.0.0.1:3478', TURN_SECRET: 'a-very-long-shared-secret', WEBRTC_LOOPBACK_ONLY: '1' });
});
afterAll(async () => {
  await t.stop();
});

async function call(mode: Record<string, unknown> = {}) {
  const sessionId = sid('rtc');
  const ws = await WsTestClient.open(t.wsUrl);
  ws.send({ type: 'start', session_id: sessionId, api_key: t.key, mode: { kind: 'service', ...mode }, audio: { sr: 48000 }, transport: { kind: 'webrtc' } });
  const ice = await ws.waitFor('webrtc_ice');
  const peer = new WebRtcTestPeer();
  ws.send({ type: 'webrtc_offer', sdp: await peer.offer() });
  const answer = await ws.waitFor('webrtc_answer');
  await peer.accept(answer.sdp);
  return { sessionId, ws, peer, ice };
}

describe('WebRTC transport', () => {
  it('answers start with webrtc_ice first (TURN credentials in the REST scheme), then the offer with webrtc_answer', async () => {
    const { ws, peer, ice, sessionId } = await call({ greeting: false });
    expect(ws.frames[0]?.type).toBe('webrtc_ice');
    const turn = ice.ice_servers.find((s) => String(s.urls).includes('turn:'));
    expect(turn?.username).toMatch(new RegExp(`^\\d+:${sessionId}$`));
    expect(turn?.credential).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const ready = await Promise.race([ws.waitFor('ready', () => true, 8000), peer.waitFor('ready')]);
    expect(ready.modality).toBe('voice');
    ws.assertProtocol();
    await peer.close();
    ws.close();
  });

  it('holds a voice conversation over Opus both ways, and the call survives the signaling socket closing', async () => {
    const { ws, peer } = await call({ greeting: 'Hello from the server.' });
    await Promise.race([ws.waitFor('ready', () => true, 8000), peer.waitFor('ready')]);
    // Greeting audio arrives as RTP.
    await peer.waitFor('done', () => true, 10000).catch(() => ws.waitFor('done'));
    expect(peer.receivedMs()).toBeGreaterThan(500);
    expect(peakOf(concat(...peer.received))).toBeGreaterThan(1000);
    ws.ws.terminate();
    await ws.waitClose();
    expect(peer.controlOpen).toBe(true);
    const before = peer.received.length;
    await peer.stream(concat(roomTone(300, 48000), loadFixture('twelve.wav', 48000), roomTone(1200, 48000)));
    const asr = await peer.waitFor('asr', () => true, 10000);
    expect(asr.text).toBe('what is twelve times seven');
    await peer.waitFor('done', (d) => d.turn_id === asr.turn_id, 15000);
    expect(peer.received.length).toBeGreaterThan(before + 20);
    peer.assertProtocol();
    await peer.close();
  });

  it('hears speech through 10% uplink packet loss: the endpointer never stalls; the metrics see the call', async () => {
    const before = await scrape(t.url);
    const { ws, peer } = await call({ greeting: false });
    await Promise.race([ws.waitFor('ready', () => true, 8000), peer.waitFor('ready')]);
    // The trailing room tone outlasts the longest wait a lexical cue may ask for (5 × 260 ms): the
    // recogniser's partial of this lossy audio may end on a preposition, and a stream that stops
    // sending never counts more silence.
    const audio = concat(roomTone(300, 48000), loadFixture('weather.wav', 48000), roomTone(1600, 48000));
    await peer.stream(audio, { drop: (n) => n % 10 === 5 });
    const asr = await peer.waitFor('asr', () => true, 10000).catch(() => ws.waitFor('asr'));
    expect(asr.text).toContain('weather');
    await peer.waitFor('done', (d) => d.turn_id === asr.turn_id, 15000).catch(() => ws.waitFor('done'));
    const after = await scrape(t.url);
    const delta = (name: string, labels: Record<string, string> = {}): number => after.value(name, labels) - before.value(name, labels);
    const packets = Math.ceil(audio.length / 960);
    // Every dropped packet was given up by the jitter buffer (the last one may still be waiting).
    expect(delta('parley_webrtc_packets_lost_total')).toBeGreaterThanOrEqual(Math.floor(packets / 10) - 1);
    expect(delta('parley_webrtc_packets_lost_total')).toBeLessThanOrEqual(Math.ceil(packets / 10));
    // About one jitter sample per second of uplink; the connect time once.
    expect(delta('parley_webrtc_jitter_seconds_count')).toBeGreaterThanOrEqual(Math.floor((packets * 0.9) / 50));
    expect(delta('parley_webrtc_connect_seconds_count')).toBe(1);
    // The reply's RTP packets were paced (in the media worker) and each measured.
    expect(delta('parley_downlink_lateness_seconds_count', { transport: 'webrtc' })).toBeGreaterThan(10);
    // This call is live (earlier calls of this file may still be winding down).
    expect(after.value('parley_sessions_active', { transport: 'webrtc', modality: 'voice' })).toBeGreaterThanOrEqual(1);
    await peer.close();
    ws.close();
  }, 40_000);

  it('control frames travel on the data channel; wrap_up ends the call with bye {code:1000, reason:"idle"}', async () => {
    const { ws, peer } = await call({ greeting: false });
    await Promise.race([ws.waitFor('ready', () => true, 8000), peer.waitFor('ready')]);
    await peer.waitControlOpen();
    peer.sendControl({ type: 'set_voice', voice: 'rms' });
    expect(await peer.waitFor('voice')).toMatchObject({ voice: 'rms' });
    peer.sendControl({ type: 'wrap_up' });
    const bye = await peer.waitFor('bye', () => true, 15000);
    expect(bye).toEqual({ type: 'bye', code: 1000, reason: 'idle' });
    peer.assertProtocol();
    await peer.close();
  });

  it('refuses an offer without audio, a malformed offer, a second offer, an offer on a WebSocket session, and background_audio on WebSocket', async () => {
    const sessionId = sid('rtcbad');
    const ws = await WsTestClient.open(t.wsUrl);
    ws.send({ type: 'start', session_id: sessionId, api_key: t.key, mode: { kind: 'service', greeting: false }, audio: {}, transport: { kind: 'webrtc' } });
    await ws.waitFor('webrtc_ice');
    ws.send({ type: 'webrtc_offer', sdp: 'v=0\r\ns=-\r\nt=0 0\r\n' });
    expect((await ws.waitFor('error')).code).toBe('invalid_offer');
    ws.send({ type: 'webrtc_offer', sdp: 'v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nthis is not sdp' });
    expect((await ws.waitFor('error', (e) => ws.all('error').indexOf(e) === 1, 8000)).code).toBe('invalid_offer');
    const peer = new WebRtcTestPeer();
    ws.send({ type: 'webrtc_offer', sdp: await peer.offer() });
    await ws.waitFor('webrtc_answer');
    ws.send({ type: 'webrtc_offer', sdp: await new WebRtcTestPeer().offer() });
    expect((await ws.waitFor('error', (e) => e.detail.includes('already'))).code).toBe('invalid_offer');
    await peer.close();
    ws.close();

    const plain = await WsTestClient.open(t.wsUrl);
    plain.send({ type: 'start', session_id: sid(), api_key: t.key, mode: { kind: 'service', modality: 'text', greeting: false } });
    await plain.waitFor('ready');
    plain.send({ type: 'webrtc_offer', sdp: 'v=0' });
    expect((await plain.waitFor('error')).code).toBe('unexpected_offer');
    plain.close();
  });

  it('barge-in stops the downlink at once: the media worker drops the packets it was handed ahead of time', async () => {
    const { ws, peer } = await call({ greeting: 'Welcome to the service desk. I can help with your account, your orders, deliveries, returns, and anything else you need today, so take your time.' });
    await Promise.race([ws.waitFor('ready', () => true, 8000), peer.waitFor('ready')]);
    await peer.waitReceived(25);
    void peer.stream(concat(loadFixture('twelve.wav', 48000), roomTone(1500, 48000)));
    const interrupted = await peer.waitFor('interrupted', () => true, 8000);
    const at = peer.frameArrivals[peer.frames.indexOf(interrupted)]!;
    // Until the barge's transcript arrives (the user is still speaking for a second and more),
    // no new reply can send audio: every packet in that window is left over from the old one.
    const asr = await peer.waitFor('asr', () => true, 10000);
    const until = peer.frameArrivals[peer.frames.indexOf(asr)]!;
    // The session pacer hands frames to the worker 200 ms ahead and the worker keeps ~140 ms of
    // them queued: without the discard about seven more packets would follow `interrupted`.
    const after = peer.packetArrivals.filter((t) => t > at + 2 && t < until).length;
    expect(after).toBeLessThanOrEqual(1);
    await peer.close();
    ws.close();
  });

  it('mixes the background bed for the whole call: RTP flows in silence', async () => {
    const { ws, peer } = await call({ greeting: false, background_audio: true });
    await Promise.race([ws.waitFor('ready', () => true, 8000), peer.waitFor('ready')]);
    const from = peer.received.length;
    await peer.waitReceived(from + 50);
    const frames = peer.received.slice(from, from + 50);
    // About 50 packets a second (here: 50 within 1.4 s), quiet but not silent.
    expect(peer.packetArrivals[from + 49]! - peer.packetArrivals[from]!).toBeLessThan(1400);
    const peak = peakOf(concat(...frames));
    expect(peak).toBeGreaterThan(50);
    expect(peak).toBeLessThan(4000);
    await peer.close();
    ws.close();
  });
});

describe('WebRTC with the peer connections on the main thread (WEBRTC_MEDIA_WORKERS=0)', () => {
  let local: TestServer;
  beforeAll(async () => {
    local = await startTestServer({ ...WARM_RECOGNISERS, ...WARM_MEDIA_WORKERS, LOCAL_LLM_WORD_DELAY_MS: '10', STUN_URLS: '', WEBRTC_LOOPBACK_ONLY: '1', WEBRTC_MEDIA_WORKERS: '0' });
  });
  afterAll(async () => {
    await local.stop();
  });

  it('holds the same conversation: greeting out, speech in, answer out', async () => {
    const ws = await WsTestClient.open(local.wsUrl);
    ws.send({ type: 'start', session_id: sid('rtc-local'), api_key: local.key, mode: { kind: 'service', greeting: 'Hello from the main thread.' }, audio: { sr: 48000 }, transport: { kind: 'webrtc' } });
    await ws.waitFor('webrtc_ice');
    const peer = new WebRtcTestPeer();
    ws.send({ type: 'webrtc_offer', sdp: await peer.offer() });
    await peer.accept((await ws.waitFor('webrtc_answer')).sdp);
    await Promise.race([ws.waitFor('ready', () => true, 8000), peer.waitFor('ready')]);
    await peer.waitFor('done', () => true, 10000).catch(() => ws.waitFor('done'));
    expect(peer.receivedMs()).toBeGreaterThan(500);
    await peer.stream(concat(roomTone(300, 48000), loadFixture('twelve.wav', 48000), roomTone(1200, 48000)));
    const asr = await peer.waitFor('asr', () => true, 10000).catch(() => ws.waitFor('asr'));
    expect(asr.text).toBe('what is twelve times seven');
    peer.assertProtocol();
    await peer.close();
    ws.close();
  });
});

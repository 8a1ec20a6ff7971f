import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { startTestServer, WARM_RECOGNISERS, type TestServer } from '../../signaling/testing/test-server.ts';
import { chromiumAvailable, closeChromium, launchChromium } from './browser.ts';
import { events, makeClient, openClientPage, waitEvent, waitSocketsClosed, wireFrames, type W } from './client-page.ts';

/**
 * The experimental WebRTC transport. Against the real server it is skipped until the server's
 * media/ WebRTC transport lands (today the server answers start with transport kind webrtc by
 * `unsupported_transport`). Meanwhile the client side runs against a stand-in: a tiny signaling
 * server in this process plus a second Chromium page as the answering peer, speaking SPEC's
 * frames (webrtc_ice, webrtc_offer, webrtc_answer, ready, JSON over the `control` channel, bye).
 */

describe.skipIf(!chromiumAvailable())('RealtimeClient in Chromium: WebRTC transport', { timeout: 30_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let peer: Page;

  beforeAll(async () => {
    server = await startTestServer({ ...WARM_RECOGNISERS, LOCAL_LLM_WORD_DELAY_MS: '5', WEBRTC_LOOPBACK_ONLY: '1' });
    // Real host candidates instead of mDNS names, loopback allowed: peers connect on this machine.
    browser = await launchChromium({ media: true, args: ['--disable-features=WebRtcHideLocalIpsWithMdns', '--allow-loopback-in-peer-connection'] });
  });

  afterAll(async () => {
    await closeChromium(browser);
    await server?.stop();
  });

  afterEach(async () => {
    await page?.close();
    await peer?.close();
  });

  // Needs the server's WebRTC transport (media/webrtc: werift peer, Opus, the `control` data
  // channel; signaling/ws/webrtc-setup.ts). The committed server refuses transport kind webrtc
  // with `unsupported_transport`. Passed locally against the in-progress working tree: un-skip
  // when media/webrtc lands.
  it('talks over WebRTC with the real server: ice, offer/answer, control channel, signaling loss survives', async () => {
    page = await openClientPage(browser, server);
    await makeClient(page, { transport: 'webrtc', mode: { greeting: 'Hello over WebRTC.', background_audio: true } }, 'voice');
    const ready = await page.evaluate(() => (window as W).client.connect());
    expect(ready.type).toBe('ready');
    await page.evaluate(() => (window as W).client.startMic());
    expect(await page.evaluate(() => (window as W).client.transport)).toBe('webrtc');
    const [start] = await wireFrames(page, 'start');
    expect(start!.transport).toEqual({ kind: 'webrtc' });
    expect(start!.mode).toMatchObject({ background_audio: true });
    expect(await wireFrames(page, 'webrtc_offer')).toHaveLength(1);
    // webrtc_ice, then webrtc_answer, come before ready
    const order = await page.evaluate(() => (window as W).client.log.map((e: W) => e.type).filter((t: string) => t.startsWith('webrtc') || t === 'ready'));
    expect(order).toEqual(['webrtc_ice', 'webrtc_answer', 'ready']);
    await waitEvent(page, 'done', {}, 10000);
    // JSON frames travel on the control channel
    const ack = await page.evaluate(() => (window as W).client.injectContext('my name is Ada', { role: 'context' }));
    expect(ack.accepted).toBe(true);
    expect(await page.evaluate(() => (window as W).__wire.filter((w: W) => w.kind === 'dc:control').map((w: W) => w.json.type))).toContain('inject_context');
    // the signaling socket goes; the call does not
    await page.evaluate(() => (window as W).client._debugDropSocket());
    await waitSocketsClosed(page);
    expect(await events(page, 'reconnecting')).toEqual([]);
    expect(await events(page, 'close')).toEqual([]);
    const reply = await page.evaluate(() => (window as W).client.injectContext('what is 2 plus 2'));
    expect(reply.reply_started).toBe(true);
    expect(await waitEvent(page, 'utterance', { textIncludes: '4' }, 10000)).toBeTruthy();
  });

  it('client side against a stand-in peer: waits for webrtc_ice, offers, applies the answer, uses the control channel, survives signaling loss, ends on bye', async () => {
    const signaling = await startSignaling();
    try {
      peer = await openClientPage(browser, server);
      await installAnsweringPeer(peer);
      page = await openClientPage(browser, server);
      await makeClient(page, { url: signaling.url, transport: 'webrtc', mode: { greeting: false, background_audio: true } }, 'voice');
      await page.evaluate(() => (window as W).client.startMic());

      // The stand-in server: ice first, then the answer from the peer page, then ready.
      const connecting = page.evaluate(() => (window as W).client.connect());
      const ws = await signaling.nextSocket();
      const start = await ws.next();
      expect(start).toMatchObject({ type: 'start', transport: { kind: 'webrtc' }, mode: { background_audio: true }, audio: { sr: 16000 } });
      ws.send({ type: 'webrtc_ice', ice_servers: [] });
      const offer = await ws.next();
      expect(offer.type).toBe('webrtc_offer');
      expect(offer.sdp).toContain('m=audio');
      expect(offer.sdp).toContain('webrtc-datachannel');
      const answer = await peer.evaluate((sdp) => (window as W).answer(sdp), offer.sdp as string);
      ws.send({ type: 'webrtc_answer', sdp: answer });
      ws.send({ type: 'ready', modality: 'voice', voice: 'kal', name: 'Kal', voices: [], audio: { output_encoding: 'pcm16', output_sr: 16000 }, resume_token: 'rt_rtc' });
      const ready = await connecting;
      expect(ready.resume_token).toBe('rt_rtc');
      expect(await page.evaluate(() => (window as W).client.transport)).toBe('webrtc');

      // Media and control: the peer hears a track, JSON frames go both ways over `control`.
      await peer.waitForFunction(() => (window as W).peerState.control === 'open' && (window as W).peerState.tracks > 0, { timeout: 10000 });
      await page.waitForFunction(() => (window as W).__wire !== undefined);
      expect(await page.evaluate(() => (window as W).client.setVoice('alan'))).toBe(true);
      await peer.waitForFunction(() => (window as W).peerState.received.length > 0);
      expect(await peer.evaluate(() => (window as W).peerState.received)).toEqual([{ type: 'set_voice', voice: 'alan' }]);
      expect(await page.evaluate(() => (window as W).__wire.filter((w: W) => w.kind === 'dc:control').map((w: W) => w.json))).toEqual([{ type: 'set_voice', voice: 'alan' }]);
      await peer.evaluate(() => (window as W).sendControl({ type: 'voice', voice: 'alan', name: 'Alan' }));
      expect(await waitEvent(page, 'voice')).toMatchObject({ voice: 'alan' });
      // mic frames travel on the track, not as binary WebSocket frames
      expect((await page.evaluate(() => (window as W).__wire.filter((w: W) => w.binary !== undefined).length)) as number).toBe(0);

      // The signaling socket drops: the call lives on the peer connection.
      ws.close(4000);
      await waitSocketsClosed(page);
      expect(await events(page, 'reconnecting')).toEqual([]);
      expect(await events(page, 'close')).toEqual([]);
      expect(await page.evaluate(() => (window as W).client.sendToolCancel('call_1'))).toBe(true);
      await peer.waitForFunction(() => (window as W).peerState.received.length > 1);

      // bye 1000 on control: a clean end.
      await peer.evaluate(() => (window as W).sendControl({ type: 'bye', code: 1000, reason: 'idle' }));
      expect(await waitEvent(page, 'session_end')).toEqual({ code: 1000, reason: 'idle' });
      expect(await page.evaluate(() => (window as W).client.exportResumeState())).toBeNull();
    } finally {
      await signaling.close();
    }
  });
});

/** The answering side in a page: window.answer(offerSdp) → answer SDP, with a tone as its track. */
async function installAnsweringPeer(peer: Page): Promise<void> {
  await peer.evaluate(() => {
    const state = { control: 'none', tracks: 0, received: [] as unknown[] };
    (window as W).peerState = state;
    (window as W).answer = async (sdp: string) => {
      const pc = new RTCPeerConnection();
      (window as W).peerPc = pc;
      const ctx = new AudioContext();
      const osc = ctx.createOscillator();
      const dest = ctx.createMediaStreamDestination();
      osc.connect(dest);
      osc.start();
      pc.ontrack = () => {
        state.tracks += 1;
      };
      pc.ondatachannel = (event) => {
        const channel = event.channel;
        (window as W).control = channel;
        channel.onopen = () => (state.control = 'open');
        if (channel.readyState === 'open') state.control = 'open';
        channel.onmessage = (m) => state.received.push(JSON.parse(m.data));
      };
      (window as W).sendControl = (frame: unknown) => (window as W).control.send(JSON.stringify(frame));
      await pc.setRemoteDescription({ type: 'offer', sdp });
      const [transceiver] = pc.getTransceivers();
      await transceiver!.sender.replaceTrack(dest.stream.getAudioTracks()[0]!);
      transceiver!.direction = 'sendrecv';
      await pc.setLocalDescription(await pc.createAnswer());
      await new Promise<void>((resolve) => {
        if (pc.iceGatheringState === 'complete') return resolve();
        pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && resolve();
        setTimeout(resolve, 2000);
      });
      return pc.localDescription!.sdp;
    };
  });
}

interface FakeSocket {
  next(): Promise<Record<string, unknown>>;
  send(frame: unknown): void;
  close(code: number): void;
}

/** A signaling stand-in: hands each accepted socket to the test, frame by frame. */
async function startSignaling(): Promise<{ url: string; nextSocket(): Promise<FakeSocket>; close(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const waiting: Array<(socket: FakeSocket) => void> = [];
  const accepted: FakeSocket[] = [];
  // Wrapped at once, so frames sent right after the handshake (start) are buffered, not lost.
  wss.on('connection', (ws) => {
    const fake = wrap(ws);
    const waiter = waiting.shift();
    if (waiter) waiter(fake);
    else accepted.push(fake);
  });
  function wrap(ws: WebSocket): FakeSocket {
    const frames: Record<string, unknown>[] = [];
    const wake: Array<() => void> = [];
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      frames.push(JSON.parse(String(data)) as Record<string, unknown>);
      wake.shift()?.();
    });
    return {
      async next() {
        while (frames.length === 0) await new Promise<void>((r) => wake.push(r));
        return frames.shift()!;
      },
      send: (frame) => ws.send(JSON.stringify(frame)),
      close: (code) => ws.close(code),
    };
  }
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`,
    nextSocket: () => new Promise((resolve) => (accepted.length ? resolve(accepted.shift()!) : waiting.push(resolve))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => resolve());
      }),
  };
}

import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, WARM_RECOGNISERS, type TestServer } from '../../signaling/testing/test-server.ts';
import { chromiumAvailable, closeChromium, launchChromium } from './browser.ts';

/**
 * Chromium's own WebRTC stack against the server, with a fake microphone that plays a spoken
 * question: a real voice conversation over WebRTC, with the signaling socket closed once the
 * call is up. The page uses the browser's RTCPeerConnection directly (the library's WebRTC
 * transport has tests of its own), so this checks the server's side of the interop.
 */
const CLIP = fileURLToPath(new URL('../../fixtures/audio/twelve.wav', import.meta.url));

let t: TestServer;
let browser: Browser | undefined;

describe.skipIf(!chromiumAvailable())('WebRTC with headless Chromium', () => {
  beforeAll(async () => {
    t = await startTestServer({ ...WARM_RECOGNISERS, LOCAL_LLM_WORD_DELAY_MS: '10', WEBRTC_LOOPBACK_ONLY: '1' });
    // Silence first so the greeting plays out, then the question, then silence to end the turn.
    const wav = join(mkdtempSync(join(tmpdir(), 'parley-chromium-mic-')), 'question.wav');
    execFileSync('sox', [CLIP, '-r', '48000', wav, 'pad', '2.5', '6']);
    browser = await launchChromium({
      media: true,
      args: [`--use-file-for-fake-audio-capture=${wav}%noloop`, '--allow-loopback-in-peer-connection', '--disable-features=WebRtcHideLocalIpsWithMdns'],
    });
  });
  afterAll(async () => {
    await closeChromium(browser);
    await t?.stop();
  });

  it('holds a spoken conversation over WebRTC, and the call goes on after the signaling socket closes', async () => {
    const page = await browser!.newPage();
    await page.goto(`${t.url}/healthz`);
    const result = await page.evaluate(
      async (wsUrl: string, apiKey: string) => {
        const frames: { type: string; text?: string; via: string }[] = [];
        // Waits re-check on every frame's arrival.
        let wake = (): void => undefined;
        const arrived = (done: () => boolean, timeoutMs: number) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, timeoutMs);
            wake = () => {
              if (!done()) return;
              clearTimeout(timer);
              resolve();
            };
            wake();
          });
        const ws = new WebSocket(wsUrl);
        await new Promise((r) => (ws.onopen = r));
        const next = (type: string) =>
          new Promise<Record<string, unknown>>((resolve) => {
            const listener = (e: MessageEvent) => {
              const frame = JSON.parse(String(e.data));
              if (frame.type === type) {
                ws.removeEventListener('message', listener);
                resolve(frame);
              }
            };
            ws.addEventListener('message', listener);
          });
        ws.addEventListener('message', (e) => {
          frames.push({ ...JSON.parse(String(e.data)), via: 'socket' });
          wake();
        });
        ws.send(JSON.stringify({ type: 'start', session_id: 'chromium-call', api_key: apiKey, mode: { kind: 'service', greeting: 'Hello from the server.' }, audio: { sr: 48000 }, transport: { kind: 'webrtc' } }));
        const ice = (await next('webrtc_ice')) as { ice_servers: RTCIceServer[] };
        const pc = new RTCPeerConnection({ iceServers: ice.ice_servers });
        const mic = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: false, autoGainControl: false } });
        for (const track of mic.getTracks()) pc.addTrack(track, mic);
        const control = pc.createDataChannel('control');
        control.onmessage = (e) => {
          frames.push({ ...JSON.parse(String(e.data)), via: 'control' });
          wake();
        };
        const remote = new Promise<void>((r) => (pc.ontrack = () => r()));
        await pc.setLocalDescription(await pc.createOffer());
        await new Promise<void>((r) => {
          if (pc.iceGatheringState === 'complete') r();
          pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && r();
        });
        ws.send(JSON.stringify({ type: 'webrtc_offer', sdp: pc.localDescription!.sdp }));
        const answer = (await next('webrtc_answer')) as { sdp: string };
        await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
        await remote;
        await new Promise<void>((r) => (control.readyState === 'open' ? r() : (control.onopen = () => r())));
        // The call lives on the peer connection from here on.
        ws.close();
        // The spoken question's transcript and two finished turns (greeting, answer), or 20 s.
        await arrived(() => frames.some((f) => f.type === 'asr') && frames.filter((f) => f.type === 'done').length >= 2, 20000);
        const stats = await pc.getStats();
        let packetsReceived = 0;
        stats.forEach((s) => {
          if (s.type === 'inbound-rtp' && s.kind === 'audio') packetsReceived = s.packetsReceived;
        });
        const connection = pc.connectionState;
        pc.close();
        return { frames, packetsReceived, connection, socketState: ws.readyState };
      },
      t.wsUrl,
      t.key,
    );
    expect(result.connection).toBe('connected');
    expect(result.socketState).toBe(3); // CLOSED
    const asr = result.frames.find((f) => f.type === 'asr');
    expect(asr?.text).toBe('what is twelve times seven');
    expect(asr?.via).toBe('control');
    const utterances = result.frames.filter((f) => f.type === 'utterance').map((f) => f.text);
    expect(utterances.some((u) => u?.includes('84'))).toBe(true);
    // Greeting and answer arrived as Opus: 50 packets a second while speaking.
    expect(result.packetsReceived).toBeGreaterThan(100);
  });
});

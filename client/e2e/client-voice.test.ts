import type { Browser, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone } from '../../media/testing/audio-stream.ts';
import { startTestServer, WARM_RECOGNISERS, type TestServer } from '../../signaling/testing/test-server.ts';
import { chromiumAvailable, closeChromium, launchChromium } from './browser.ts';
import { clearWire, events, makeClient, openClientPage, waitReceivedAudio, waitBinary, waitCaptured, waitEvent, wireBinary, wireFrames, type W } from './client-page.ts';

/**
 * Voice in headless Chromium against the real server (offline ASR and TTS): capture from
 * Chromium's fake microphone, the stall-and-retry path, caller-pushed audio, playback with
 * barge-in reports, a caller player, and the ambience bed.
 */

describe.skipIf(!chromiumAvailable())('RealtimeClient in Chromium: voice', { timeout: 40_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ ...WARM_RECOGNISERS, LOCAL_LLM_WORD_DELAY_MS: '5' });
    browser = await launchChromium({ media: true });
  });

  afterAll(async () => {
    await closeChromium(browser);
    await server?.stop();
  });

  async function open(): Promise<Page> {
    page = await openClientPage(browser, server);
    pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    return page;
  }

  afterEach(async () => {
    expect(pageErrors).toEqual([]);
    await page?.evaluate(() => (window as W).client?.close()).catch(() => undefined);
    await page?.close();
  });

  const voice = (p: Page, options: Record<string, unknown> = {}) => makeClient(p, { ...options, mode: { greeting: false, ...((options.mode as object) ?? {}) } }, 'voice');
  const binaryCount = async (p: Page) => (await wireBinary(p)).length;

  it('captures the fake microphone: warming_up, listening, 20 ms PCM16 frames; mute, devices, stop', async () => {
    const p = await open();
    await voice(p);
    await p.evaluate(() => (window as W).client.connect());
    const t0 = Date.now();
    await p.evaluate(() => (window as W).client.startMic());
    expect(Date.now() - t0).toBeLessThan(2500);
    expect(await events(p, 'warming_up')).toEqual([{ attempt: 1, device_id: null }]);
    expect(await events(p, 'listening')).toHaveLength(1);
    await waitBinary(p, 10);
    const frames = await wireBinary(p);
    expect(new Set(frames.map((f) => f.bytes))).toEqual(new Set([640]));
    // Chromium's fake device beeps: some frames carry sound, most are silence (both are sent).
    await waitBinary(p, 0, 1000);

    // setMicEnabled(false): nothing goes out; true: frames flow again
    // Muted, the worklet keeps capturing (the page's audio clock runs on) but nothing is sent.
    await p.evaluate(() => (window as W).client.setMicEnabled(false));
    await waitCaptured(p, 5);
    const muted = await binaryCount(p);
    await waitCaptured(p, 15);
    expect(await binaryCount(p)).toBe(muted);
    await p.evaluate(() => (window as W).client.setMicEnabled(true));
    await waitBinary(p, muted + 5);

    // devices: list, switch (capture restarts on it), devicechange
    const devices = await p.evaluate(() => (window as W).client.getInputDevices());
    expect(devices.length).toBeGreaterThan(0);
    expect(devices[0]).toEqual({ deviceId: expect.any(String), label: expect.any(String), groupId: expect.any(String) });
    const target = devices.find((d: W) => d.deviceId !== 'default')?.deviceId ?? devices[0].deviceId;
    await p.evaluate((id) => (window as W).client.setInputDevice(id), target);
    expect(await waitEvent(p, 'input_device_changed')).toEqual({ device_id: target, previous_device_id: expect.anything(), reason: 'user' });
    expect(await events(p, 'warming_up')).toEqual([{ attempt: 1, device_id: null }, { attempt: 1, device_id: target }]);
    expect(await events(p, 'listening')).toHaveLength(2);
    await p.evaluate(() => navigator.mediaDevices.dispatchEvent(new Event('devicechange')));
    const changed = await waitEvent(p, 'devices_changed');
    expect(changed.device_id).toBe(target);
    expect(changed.devices.length).toBe(devices.length);
    expect(typeof changed.active_device_id).toBe('string');

    // stopMic: the stream stops. A capture of its own (not the client's) keeps the page's audio
    // clock running, so "nothing more is sent" covers 300 ms of captured audio.
    await p.evaluate(() => (window as W).client.stopMic());
    const witness = await p.evaluate(async () => {
      const ctx = new AudioContext();
      await ctx.audioWorklet.addModule(URL.createObjectURL(new Blob([`registerProcessor('witness', class extends AudioWorkletProcessor { process() { this.port.postMessage(0); return true; } });`], { type: 'text/javascript' })));
      const node = new AudioWorkletNode(ctx, 'witness');
      node.connect(ctx.destination);
      (window as W).witness = ctx;
      return ctx.state;
    });
    expect(witness).not.toBe('closed');
    await waitCaptured(p, 5);
    const stopped = await binaryCount(p);
    await waitCaptured(p, 110);
    expect(await binaryCount(p)).toBe(stopped);
    await p.evaluate(() => (window as W).witness.close());
    // an unknown device is refused with mic_not_found, reported by `failed`
    const refused = await p.evaluate(() => (window as W).client.startMic({ deviceId: 'no-such-device' }).then(() => 'started', (e: W) => e.code));
    expect(refused).toBe('mic_not_found');
    expect(await events(p, 'failed')).toMatchObject([{ code: 'mic_not_found' }]);
  });

  it('a microphone that goes away: capture moves to the system default (input_device_changed, device_lost)', async () => {
    const p = await open();
    await voice(p);
    await p.evaluate(() => (window as W).client.connect());
    const target = await p.evaluate(async () => {
      const real = MediaDevices.prototype.getUserMedia.bind(navigator.mediaDevices);
      (window as W).handed = [];
      navigator.mediaDevices.getUserMedia = async (c) => {
        const stream = await real(c);
        (window as W).handed.push(stream.getAudioTracks()[0]);
        return stream;
      };
      const devices = await (window as W).client.getInputDevices();
      const id = devices.find((d: W) => d.deviceId !== 'default')?.deviceId ?? devices[0].deviceId;
      await (window as W).client.setInputDevice(id);
      await (window as W).client.startMic();
      return id;
    });
    // The track ends (unplugged): back to the default device.
    await p.evaluate(() => (window as W).handed.at(-1).dispatchEvent(new Event('ended')));
    expect(await waitEvent(p, 'recovering', { code: 'device_lost' })).toMatchObject({ device_id: expect.any(String) });
    expect(await waitEvent(p, 'input_device_changed', { reason: 'device_lost' })).toMatchObject({ device_id: null });
    expect((await events(p, 'listening')).length).toBe(2);
    expect((await events(p, 'warming_up')).at(-1)).toEqual({ attempt: 1, device_id: null });

    // The preferred device disappears from the list: the same.
    await p.evaluate((id) => (window as W).client.setInputDevice(id), target);
    await p.evaluate(() => {
      navigator.mediaDevices.enumerateDevices = async () => [];
      navigator.mediaDevices.dispatchEvent(new Event('devicechange'));
    });
    expect(await waitEvent(p, 'devices_changed')).toMatchObject({ devices: [], device_id: target });
    await p.waitForFunction(() => (window as W).client.log.filter((e: W) => e.type === 'input_device_changed' && e.detail.reason === 'device_lost').length === 2);
  });

  it('options: inputDeviceId picks the device, sdkAec keeps frames flowing, workletUrl replaces the worklet', async () => {
    const p = await open();
    const devices = await p.evaluate(async () => (await navigator.mediaDevices.getUserMedia({ audio: true })).getTracks().map((t) => t.getSettings().deviceId));
    await voice(p, { inputDeviceId: devices[0] });
    await p.evaluate(() => (window as W).client.connect());
    await p.evaluate(() => (window as W).client.startMic({ sdkAec: true }));
    expect(await events(p, 'warming_up')).toEqual([{ attempt: 1, device_id: devices[0] }]);
    await waitBinary(p, 5);
    await p.evaluate(() => (window as W).client.stopMic());

    // A custom worklet registering the same processor name: a constant 0.25 signal.
    await clearWire(p);
    await p.evaluate(async () => {
      const src = `registerProcessor('parley-capture', class extends AudioWorkletProcessor {
        process() { this.port.postMessage(new Float32Array(960).fill(0.25)); return true; }
      });`;
      const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
      await (window as W).client.startMic({ workletUrl: url });
    });
    await waitBinary(p, 5);
    const frames = await wireBinary(p);
    expect(frames.slice(2).every((f) => Math.abs(f.peak - 8192) < 50)).toBe(true);

    // text sessions have no microphone
    await makeClient(p, { mode: { greeting: false } }, 'text');
    expect(await p.evaluate(() => (window as W).client.startMic().then(() => 'started', (e: W) => e.code))).toBe('modality_mismatch');
    expect(await p.evaluate(() => (window as W).client.pushMicFrame(new Float32Array(320)))).toBe(false);
  });

  it('a stalled first capture is released and retried once; a second stall rejects with capture_stalled', async () => {
    const p = await open();
    await voice(p, { captureStartupTimeoutMs: 300 });
    await p.evaluate(() => (window as W).client.connect());
    // A track that never delivers: a receiver track of an unconnected peer connection (muted).
    const result = await p.evaluate(async () => {
      const handed: MediaStreamTrack[] = [];
      navigator.mediaDevices.getUserMedia = async () => {
        const track = new RTCPeerConnection().addTransceiver('audio').receiver.track;
        handed.push(track);
        return new MediaStream([track]);
      };
      const t0 = performance.now();
      const code = await (window as W).client.startMic().then(() => 'started', (e: W) => e.code);
      return { code, elapsed: performance.now() - t0, handed: handed.length, ended: handed.map((t) => t.readyState) };
    });
    expect(result.code).toBe('capture_stalled');
    expect(result.elapsed).toBeGreaterThanOrEqual(550);
    expect(result.handed).toBe(2);
    expect(result.ended).toEqual(['ended', 'ended']);
    const seen = await p.evaluate(() => (window as W).client.log.filter((e: W) => e.via === 'lib' && e.type !== 'resume_state').map((e: W) => [e.type, e.detail.code ?? e.detail.attempt]));
    expect(seen).toEqual([
      ['warming_up', 1],
      ['recovering', 'capture_stalled'],
      ['warming_up', 2],
      ['failed', 'capture_stalled'],
    ]);
    expect(await binaryCount(p)).toBe(0);

    // A stall, then a working microphone on the retry: startMic resolves.
    const recovered = await p.evaluate(async () => {
      const real = MediaDevices.prototype.getUserMedia.bind(navigator.mediaDevices);
      let calls = 0;
      navigator.mediaDevices.getUserMedia = async (c) => (++calls === 1 ? new MediaStream([new RTCPeerConnection().addTransceiver('audio').receiver.track]) : real(c));
      (window as W).client.log.length = 0;
      await (window as W).client.startMic();
      return (window as W).client.log.filter((e: W) => e.via === 'lib').map((e: W) => e.type);
    });
    expect(recovered).toEqual(['warming_up', 'recovering', 'warming_up', 'listening']);
  });

  it('pushMicFrame/appendAudio speech barges in: interrupted, playback_stopped reported, utterance corrected, then answered', async () => {
    const p = await open();
    await voice(p);
    await p.evaluate(() => (window as W).client.connect());
    const ack = await p.evaluate(() => (window as W).client.injectContext(`say ${'one two three four five six seven eight nine ten. '.repeat(4)}`));
    expect(ack.reply_started).toBe(true);
    await waitEvent(p, 'audio');
    // A good part of the reply is out before the barge, so the correction has something to cut.
    await waitReceivedAudio(p, 1200);
    const heard = await events(p, 'audio');
    expect(heard[0]).toMatchObject({ sr: 16000, isFloat32: true });
    expect(await p.evaluate(() => (window as W).client.responding)).toBe(true);

    const speech = concat(loadFixture('name.wav'), roomTone(900));
    const floats = Array.from(speech, (s) => s / 32768);
    // A microphone of the caller's: one 20 ms frame per 20 ms (setInterval); the first half through
    // pushMicFrame, the rest through appendAudio.
    await p.evaluate(
      (samples: number[]) =>
        new Promise<void>((resolve, reject) => {
          const c = (window as W).client;
          const all = Float32Array.from(samples);
          let i = 0;
          const timer = setInterval(() => {
            const frame = all.slice(i, i + 320);
            const sent = i < all.length / 2 ? c.pushMicFrame(frame) : c.appendAudio(frame);
            i += 320;
            if (!sent) reject(new Error('frame not sent'));
            if (!sent || i >= all.length) {
              clearInterval(timer);
              resolve();
            }
          }, 20);
        }),
      floats,
    );

    const interrupted = await waitEvent(p, 'interrupted', { turn_id: ack.turn_id });
    expect(interrupted).toMatchObject({ clear: true, barge_seq: 1 });
    const [report] = await wireFrames(p, 'client_event');
    expect(report).toEqual({ type: 'client_event', event: 'playback_stopped', remaining_ms: expect.any(Number), discarded_ms: expect.any(Number), barge_seq: 1 });
    expect(report!.remaining_ms).toBeGreaterThanOrEqual(0);
    const corrected = await waitEvent(p, 'utterance', { turn_id: ack.turn_id, corrected: true });
    expect(corrected.barge_seq).toBe(1);
    const asr = await waitEvent(p, 'asr', { input_source: 'voice' }, 10000);
    expect(asr.text).toBe('my name is robert');
    await waitEvent(p, 'done', { turn_id: asr.turn_id }, 10000);
    // the pushed frames were 20 ms of PCM16 each (the clip's last frame is shorter)
    expect(new Set((await wireBinary(p)).slice(0, -1).map((f) => f.bytes))).toEqual(new Set([640]));
  });

  it('a caller player gets decoded pcm_f32le audio; unlockAudio unlocks it; canceled playback is reported with its remaining time', async () => {
    const p = await open();
    const result = await p.evaluate(async () => {
      const player = {
        chunks: [] as Array<{ n: number; sr: number; float: boolean }>,
        cleared: 0,
        unlocked: false,
        enqueue(samples: Float32Array, sr: number) {
          this.chunks.push({ n: samples.length, sr, float: samples instanceof Float32Array });
        },
        clear() {
          this.cleared += 1;
          return { remainingMs: 123.4, discardedMs: 250 };
        },
        unlock() {
          this.unlocked = true;
        },
      };
      const c = await (window as W).makeClient({
        player,
        downlink: { encoding: 'pcm_f32le', sampleRate: 24000 },
        mode: { kind: 'service', modality: 'voice', greeting: 'Welcome to the test, this greeting is long enough.' },
      });
      await c.unlockAudio();
      const ready = await c.connect();
      await (window as W).waitEvent(c, 'audio', {}, 8000);
      const responding = c.responding;
      c.interrupt();
      await (window as W).waitEvent(c, 'interrupted', {}, 4000);
      await (window as W).waitEvent(c, 'done', {}, 4000);
      return { audio: ready.audio, player: { chunks: player.chunks.slice(0, 2), cleared: player.cleared, unlocked: player.unlocked }, responding, after: c.responding };
    });
    expect(result.audio).toEqual({ output_encoding: 'pcm_f32le', output_sr: 24000 });
    expect(result.player.unlocked).toBe(true);
    expect(result.player.chunks[0]).toEqual({ n: 480, sr: 24000, float: true });
    expect(result.responding).toBe(true);
    expect(result.after).toBe(false);
    expect(result.player.cleared).toBe(1);
    expect(await wireFrames(p, 'client_event')).toEqual([{ type: 'client_event', event: 'playback_stopped', remaining_ms: 123, discarded_ms: 250, barge_seq: 1 }]);
    expect(await wireFrames(p, 'interrupt')).toEqual([{ type: 'interrupt' }]);
    expect((await events(p, 'audio'))[0]).toMatchObject({ sr: 24000, n: 480 });
    const [start] = await wireFrames(p, 'start');
    expect(start!.audio).toEqual({ sr: 16000, output_encoding: 'pcm_f32le', output_sr: 24000 });
  });

  it('the default player plays; reset during a reply clears playback and reports what was unheard', async () => {
    const p = await open();
    await voice(p, { mode: { greeting: 'Hello there, this is the default player speaking for a while.' } });
    const result = await p.evaluate(async () => {
      const c = (window as W).client;
      await c.unlockAudio();
      await c.connect();
      await (window as W).waitEvent(c, 'audio', {}, 8000);
      // Some of the greeting has been received (and is playing) when the reset lands.
      await new Promise<void>((resolve) => {
        const check = () => ((window as W).audioMs(c) >= 300 ? resolve() : requestAnimationFrame(check));
        check();
      });
      const reset = c.reset();
      return { reset };
    });
    expect(result.reset).toBe(true);
    expect(await wireFrames(p, 'reset')).toEqual([{ type: 'reset' }]);
    // The server interrupts the greeting; the default player reports its unplayed queue.
    await waitEvent(p, 'interrupted');
    const [report] = await wireFrames(p, 'client_event');
    expect(report).toMatchObject({ event: 'playback_stopped', barge_seq: 1 });
    expect(report!.remaining_ms).toBeGreaterThan(0);
    expect(report!.remaining_ms).toBeLessThan(2000);
  });

  it('ambience: continuous from ready, thinking after afterS of working, off, setAmbience', async () => {
    const p = await open();
    await voice(p, { ambience: 'continuous' });
    await p.evaluate(() => (window as W).client.connect());
    expect(await p.evaluate(() => (window as W).client.ambienceActive)).toBe(true);
    await p.evaluate(() => (window as W).client.setAmbience('off'));
    expect(await p.evaluate(() => (window as W).client.ambienceActive)).toBe(false);
    expect(await wireFrames(p, 'ambience')).toEqual([
      { type: 'ambience', active: true },
      { type: 'ambience', active: false },
    ]);
    await p.evaluate(() => (window as W).client.close());

    await clearWire(p);
    await voice(p, {
      ambience: { mode: 'thinking', afterS: 0.8, fadeInS: 0.1, fadeOutS: 0.1, level: 0.08 },
      mode: { tools: [{ name: 'get_time', parameters: { type: 'object', properties: {} } }] },
    });
    await p.evaluate(() => (window as W).client.connect());
    expect(await p.evaluate(() => (window as W).client.ambienceActive)).toBe(false);
    await p.evaluate(() => (window as W).client.injectContext('please get time'));
    const call = await waitEvent(p, 'tool_call');
    await waitEvent(p, 'working', { active: true });
    expect(await p.evaluate(() => (window as W).client.ambienceActive)).toBe(false);
    await p.waitForFunction(() => (window as W).client.ambienceActive === true, { timeout: 3000 });
    const elapsed = await p.evaluate(() => {
      const log = (window as W).client.log;
      return performance.now() - log.find((e: W) => e.type === 'working' && e.detail.active).t;
    });
    expect(elapsed).toBeGreaterThanOrEqual(750);
    await p.evaluate((id) => (window as W).client.sendToolResult(id, { time: '12:00' }, { outcome: 'succeeded', verified: true }), call.id);
    await waitEvent(p, 'working', { active: false });
    expect(await p.evaluate(() => (window as W).client.ambienceActive)).toBe(false);
    expect(await wireFrames(p, 'ambience')).toEqual([
      { type: 'ambience', active: true },
      { type: 'ambience', active: false },
    ]);
    // setAmbience('continuous') mid-call starts the bed at once
    await p.evaluate(() => (window as W).client.setAmbience('continuous'));
    expect(await p.evaluate(() => (window as W).client.ambienceActive)).toBe(true);
  });
});

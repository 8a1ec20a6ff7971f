import { Writable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { MediaWorkerPool, MediaWorkerStartError } from '../../media/webrtc/worker-peer.ts';
import { SpeechUnavailableError } from '../../session/providers/asr.ts';
import { FliteTextToSpeech } from '../../session/providers/flite-tts.ts';
import { PocketsphinxSpeechToText } from '../../session/providers/pocketsphinx-asr.ts';
import { loadConfig } from '../config.ts';
import { createVoiceProviders } from '../voice-providers.ts';
import { WARM_CALL_TIMEOUT_MS, warmMediaWorkers, workerPoolFor } from './media-workers.ts';

/** The server's start-up wiring of the media workers, on pools of stand-in threads (media/testing/fixture-media-worker.mjs). */
const FIXTURE = new URL('../../media/testing/fixture-media-worker.mjs', import.meta.url);
const threadsOf = (p: MediaWorkerPool): Array<{ worker: Worker }> => (p as unknown as { workers: Array<{ worker: Worker }> }).workers;

function fixturePool(mode: 'ready' | 'throw' | 'hang', size = 2): MediaWorkerPool {
  process.env.PARLEY_FIXTURE_WORKER = mode;
  const pool = new MediaWorkerPool(size, 0, 0, FIXTURE);
  return pool;
}

function logged() {
  const lines: Array<{ level: number; msg: string; [key: string]: unknown }> = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { log, lines };
}

// The threads are left to the process's end (unref'd): a warm pool would replace each one stopped here.
afterAll(() => {
  delete process.env.PARLEY_FIXTURE_WORKER;
});

describe('warmMediaWorkers (before the server listens)', () => {
  it('waits until every worker is ready and says so once', async () => {
    const pool = fixturePool('ready');
    const { log, lines } = logged();
    await warmMediaWorkers(loadConfig({ WEBRTC_MEDIA_WORKERS: '2' }), log, pool);
    expect(pool.ready).toBe(2);
    expect(lines).toEqual([expect.objectContaining({ level: 30, msg: 'media workers ready', workers: 2, start_ms: expect.any(Number) })]);
  });

  it('fails the start with what stopped the worker and what to set, logged as an error', async () => {
    const pool = fixturePool('throw');
    const { log, lines } = logged();
    const error = await warmMediaWorkers(loadConfig({ WEBRTC_MEDIA_WORKERS: '2' }), log, pool).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaWorkerStartError);
    expect((error as Error).message).toBe(
      'a media worker thread stopped before it was ready: cannot load werift (fixture). WebRTC calls run in these threads: fix the installation, or set WEBRTC_MEDIA_WORKERS=0 to run calls on the main thread',
    );
    expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'media workers could not start', reason: expect.stringContaining('cannot load werift') })]);
  });

  it('listens anyway past WEBRTC_WORKER_START_TIMEOUT_MS, with a warning, the workers still starting', async () => {
    const pool = fixturePool('hang');
    const { log, lines } = logged();
    await warmMediaWorkers(loadConfig({ WEBRTC_MEDIA_WORKERS: '2', WEBRTC_WORKER_START_TIMEOUT_MS: '150' }), log, pool);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: 'media workers not ready within 150 ms (0 of 2); listening anyway, the first WebRTC calls wait for them', workers: 2, ready: 0 }),
    ]);
    expect(threadsOf(pool)).toHaveLength(2);
  });

  it('starts nothing with WEBRTC_WARM_WORKERS=0 or WEBRTC_MEDIA_WORKERS=0', async () => {
    for (const env of [{ WEBRTC_WARM_WORKERS: '0' }, { WEBRTC_MEDIA_WORKERS: '0' }]) {
      const pool = fixturePool('ready');
      const { log, lines } = logged();
      await warmMediaWorkers(loadConfig(env), log, pool);
      expect(threadsOf(pool)).toEqual([]);
      expect(lines).toEqual([]);
    }
  });
});

describe('workerPoolFor: the warm-up call', () => {
  it('is made only with WEBRTC_WARM_CALL=1, by workers started ahead of calls; a failure is logged as a warning', () => {
    const { log, lines } = logged();
    // Sizes no other test uses: pools are per process.
    expect(workerPoolFor(loadConfig({ WEBRTC_MEDIA_WORKERS: '5', WEBRTC_WARM_CALL: '1' }), log).warmCallTimeoutMs).toBe(WARM_CALL_TIMEOUT_MS);
    expect(workerPoolFor(loadConfig({ WEBRTC_MEDIA_WORKERS: '6' }), log).warmCallTimeoutMs).toBe(0);
    expect(workerPoolFor(loadConfig({ WEBRTC_MEDIA_WORKERS: '7', WEBRTC_WARM_WORKERS: '0', WEBRTC_WARM_CALL: '1' }), log).warmCallTimeoutMs).toBe(0);
    workerPoolFor(loadConfig({ WEBRTC_MEDIA_WORKERS: '5', WEBRTC_WARM_CALL: '1' }), log).onWarmCallFailed?.('the warm-up call did not finish within 5000 ms (connecting)');
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, reason: 'the warm-up call did not finish within 5000 ms (connecting)', msg: "a media worker's warm-up call failed; it is ready anyway, its first WebRTC call pays werift's first use" }),
    ]);
  });
});

describe('createVoiceProviders: media workers warm alongside the recognisers', () => {
  // One warm recogniser and the fvad detector: the real local providers, kept small.
  const config = loadConfig({ WEBRTC_MEDIA_WORKERS: '2', ASR_PROVIDER: 'local', ASR_WARM_PROCESSES: '1', VAD_PROVIDER: 'webrtc', TTS_WORKERS: '1' });
  afterEach(() => vi.restoreAllMocks());

  /** Records when the recognisers' load settles, as an order of events (no clock). */
  function watchRecognisers(events: string[]): void {
    const whenReady = PocketsphinxSpeechToText.prototype.whenReady;
    vi.spyOn(PocketsphinxSpeechToText.prototype, 'whenReady').mockImplementation(function (this: PocketsphinxSpeechToText) {
      return whenReady.call(this).then(() => void events.push('recognisers ready'));
    });
  }

  it('starts the warm-up before the recognisers have loaded and resolves only once both are done', async () => {
    const events: string[] = [];
    watchRecognisers(events);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { log } = logged();
    const starting = createVoiceProviders(config, log, {}, () => {
      events.push('warm-up started');
      return gate;
    });
    starting.then(() => events.push('providers resolved'), () => undefined);
    await vi.waitUntil(() => events.includes('recognisers ready'), { timeout: 30000, interval: 20 });
    // The recognisers are ready, the warm-up is not: nothing resolves yet.
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['warm-up started', 'recognisers ready']);
    release();
    const voice = await starting;
    expect(events).toEqual(['warm-up started', 'recognisers ready', 'providers resolved']);
    expect(voice.ok).toBe(true);
    if (voice.ok) await Promise.all([voice.stt.close?.(), voice.tts.close?.()]);
  });

  it('a media worker that cannot load fails the start with the same error, once the recognisers have settled, closing what it made', async () => {
    const events: string[] = [];
    watchRecognisers(events);
    const closed = [vi.spyOn(PocketsphinxSpeechToText.prototype, 'close'), vi.spyOn(FliteTextToSpeech.prototype, 'close')];
    const pool = fixturePool('throw');
    const { log, lines } = logged();
    const error = await createVoiceProviders(config, log, {}, () => warmMediaWorkers(config, log, pool)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaWorkerStartError);
    expect((error as Error).message).toBe(
      'a media worker thread stopped before it was ready: cannot load werift (fixture). WebRTC calls run in these threads: fix the installation, or set WEBRTC_MEDIA_WORKERS=0 to run calls on the main thread',
    );
    expect(events).toEqual(['recognisers ready']);
    for (const close of closed) expect(close).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'media workers could not start' })]);
  });

  it('past WEBRTC_WORKER_START_TIMEOUT_MS voice is on anyway, with the warning', async () => {
    const pool = fixturePool('hang');
    const { log, lines } = logged();
    const bounded = { ...config, WEBRTC_WORKER_START_TIMEOUT_MS: 150 };
    const voice = await createVoiceProviders(bounded, log, {}, () => warmMediaWorkers(bounded, log, pool));
    expect(voice.ok).toBe(true);
    expect(lines.map((l) => l.msg)).toEqual(['media workers not ready within 150 ms (0 of 2); listening anyway, the first WebRTC calls wait for them', 'voice providers']);
    if (voice.ok) await Promise.all([voice.stt.close?.(), voice.tts.close?.()]);
  });

  it('starts no media worker when the recogniser is missing (voice off)', async () => {
    vi.spyOn(PocketsphinxSpeechToText, 'check').mockImplementation(() => {
      throw new SpeechUnavailableError('offline speech recognition needs Debian packages pocketsphinx and pocketsphinx-en-us (fixture)');
    });
    const alongside = vi.fn(() => Promise.resolve());
    const { log } = logged();
    const voice = await createVoiceProviders(config, log, {}, alongside);
    expect(voice).toEqual({ ok: false, reason: expect.stringContaining('(fixture)') });
    expect(alongside).not.toHaveBeenCalled();
  });
});

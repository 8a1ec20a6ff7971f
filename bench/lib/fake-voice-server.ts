import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { mediaWorkerPools } from '../../media/webrtc/worker-peer.ts';
import { loadVadFactory } from '../../media/vad-factory.ts';
import { loadConfig } from '../../signaling/config.ts';
import { GcPauses } from '../../signaling/observability/gc-pauses.ts';
import { mainPacingLateness, workerPacingReports } from '../../signaling/observability/pacing.ts';
import { startServer } from '../../signaling/server.ts';
import { bargeInPolicy } from '../../signaling/voice-providers.ts';
import { FakeSpeechToText, FakeTextToSpeech } from './fake-providers.ts';

/**
 * The real server (signaling/server.ts startServer, same config loading and drain as
 * signaling/main.ts) with the instant fake ASR and TTS of fake-providers.ts and the real VAD,
 * for child-server.ts's `script` option. BENCH_FAKE_TRANSCRIPT is what every utterance is
 * recognised as (the local model answers it); BENCH_FAKE_TTS_MS_PER_CHAR sets the reply length,
 * BENCH_FAKE_TTS_RATE the synthesiser's rate (16000 like flite by default).
 */
const config = loadConfig();
const vad = await loadVadFactory(config.VAD_PROVIDER, { aggressiveness: config.VAD_AGGRESSIVENESS });
const server = await startServer(config, {
  voice: {
    ok: true,
    tts: new FakeTextToSpeech(Number(process.env.BENCH_FAKE_TTS_MS_PER_CHAR ?? 70), Number(process.env.BENCH_FAKE_TTS_RATE ?? 16000)),
    stt: new FakeSpeechToText(process.env.BENCH_FAKE_TRANSCRIPT ?? 'what is twelve times seven'),
    vad,
    bargeIn: bargeInPolicy(config),
  },
});
process.stdout.write(`parley-bench: listening on ${server.url} (fake ASR and TTS)\n`);

// The server's event-loop delay since the last report, on SIGUSR2 (bench code, not the server's):
// a late event loop is what makes the downlink pacer send late. The pacers' own send lateness
// comes from signaling/observability/pacing.ts.
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const gc = new GcPauses();
process.on('SIGUSR2', async () => {
  const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
  const handoff = mainPacingLateness(true);
  // With media workers the RTP send time is decided by the workers' own pacers; the session's
  // pacer only hands frames over ahead of time. Workers report separately: the worst one counts.
  const workers = await workerPacingReports(mediaWorkerPools(), true);
  const rtp = workers.length === 0 ? handoff : { count: workers.reduce((a, w) => a + w.count, 0), p50: Math.max(...workers.map((w) => w.p50)), p99: Math.max(...workers.map((w) => w.p99)), max: Math.max(...workers.map((w) => w.max)) };
  const report = {
    p50: ms(delay.percentile(50)),
    p99: ms(delay.percentile(99)),
    max: ms(delay.max),
    pacer: { n: rtp.count, p50: rtp.p50, p99: rtp.p99, max: rtp.max },
    ...(workers.length === 0
      ? {}
      : {
          handoff: { n: handoff.count, p50: handoff.p50, p99: handoff.p99, max: handoff.max },
          workers: workers.length,
          workerGc: { count: workers.reduce((a, w) => a + w.gc.count, 0), maxMs: Math.max(...workers.map((w) => w.gc.maxMs)) },
        }),
    gc: gc.summary(),
  };
  gc.reset();
  process.stdout.write(`parley-bench: event-loop-delay ${JSON.stringify(report)}\n`);
  delay.reset();
});
// BENCH_HEAP_SAMPLE=<file>: a sampling allocation profile (collected objects included) written at
// each report (SIGUSR2), for finding what the media path allocates per packet. Experiments only.
const heapSampleFile = process.env.BENCH_HEAP_SAMPLE;
const inspectorSession = heapSampleFile ? new (await import('node:inspector')).Session() : undefined;
if (inspectorSession) {
  inspectorSession.connect();
  inspectorSession.post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as object);
}
process.on('SIGUSR2', () => {
  inspectorSession?.post('HeapProfiler.getSamplingProfile', (error, result) => {
    if (!error && heapSampleFile) writeFileSync(heapSampleFile, JSON.stringify((result as { profile: unknown }).profile));
  });
});
const shutdown = (): void => {
  const force = setTimeout(() => process.exit(1), config.DRAIN_TIMEOUT_MS + 2000);
  force.unref();
  server.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

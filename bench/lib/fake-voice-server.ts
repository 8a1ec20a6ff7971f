import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ServerMetricsWindow } from './server-metrics.ts';
import { loadVadFactory } from '../../media/vad-factory.ts';
import { loadConfig } from '../../signaling/config.ts';
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
const vad = await loadVadFactory(config.VAD_PROVIDER, { aggressiveness: config.VAD_AGGRESSIVENESS, quietGate: config.SILERO_QUIET_GATE });
const server = await startServer(config, {
  // BENCH_OBSERVABILITY=off: the baseline server of bench/observability.ts (no measurement at all).
  ...(process.env.BENCH_OBSERVABILITY === 'off' ? { observability: 'off' as const } : {}),
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
// a late event loop is what makes the downlink pacer send late. The pacer's own send lateness and
// the GC pauses come from the server's metrics (the ones /metrics serves; server-metrics.ts).
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const window = new ServerMetricsWindow(server.context.observability.metrics);
await window.next();
process.on('SIGUSR2', async () => {
  const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
  const w = await window.next();
  // With media workers the RTP send time is decided by the workers' own pacers; the session's
  // pacer only hands frames over ahead of time.
  const workers = config.WEBRTC_MEDIA_WORKERS;
  const report = {
    p50: ms(delay.percentile(50)),
    p99: ms(delay.percentile(99)),
    max: ms(delay.max),
    pacer: { n: w.pacer.count, p50: w.pacer.p50, p99: w.pacer.p99, max: w.pacer.max },
    ...(w.handoff.count === 0
      ? {}
      : {
          handoff: { n: w.handoff.count, p50: w.handoff.p50, p99: w.handoff.p99, max: w.handoff.max },
          workers,
          workerGc: { count: w.workerGc.count, maxMs: w.workerGc.max },
        }),
    gc: w.gc,
  };
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

import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { DownlinkPacer } from '../../media/downlink-pacer.ts';
import { loadVad, VoiceActivityDetector } from '../../media/vad.ts';
import { loadConfig } from '../../signaling/config.ts';
import { startServer } from '../../signaling/server.ts';
import { FakeSpeechToText, FakeTextToSpeech } from './fake-providers.ts';

/**
 * The real server (signaling/server.ts startServer, same config loading and drain as
 * signaling/main.ts) with the instant fake ASR and TTS of fake-providers.ts and the real VAD,
 * for child-server.ts's `script` option. BENCH_FAKE_TRANSCRIPT is what every utterance is
 * recognised as (the local model answers it); BENCH_FAKE_TTS_MS_PER_CHAR sets the reply length,
 * BENCH_FAKE_TTS_RATE the synthesiser's rate (16000 like flite by default).
 */
/**
 * Downlink pacer send lateness, wired from here (the pacer keeps `lateness` samples "for the
 * jitter benchmark" but nothing in the server fills them in): every pacer records into one array
 * while it is driven by the shared 5 ms clock. The call that starts a run (start() → tick with
 * now === nextAt) sends the 60 ms lead at once by design and is left out, so each sample is how
 * late a steady-state frame left: 0–5 ms nominally (the clock's period), more when the event loop
 * was late.
 */
const lateness: number[] = [];
const tick = DownlinkPacer.prototype.tick;
DownlinkPacer.prototype.tick = function patchedTick(this: DownlinkPacer, now: number): void {
  const starting = (this as unknown as { nextAt?: number }).nextAt === now;
  this.lateness = starting ? undefined : lateness;
  tick.call(this, now);
};

const config = loadConfig();
const vad = await loadVad();
const server = await startServer(config, {
  voice: {
    ok: true,
    tts: new FakeTextToSpeech(Number(process.env.BENCH_FAKE_TTS_MS_PER_CHAR ?? 70), Number(process.env.BENCH_FAKE_TTS_RATE ?? 16000)),
    stt: new FakeSpeechToText(process.env.BENCH_FAKE_TRANSCRIPT ?? 'what is twelve times seven'),
    createVad: () => new VoiceActivityDetector(vad, config.VAD_AGGRESSIVENESS),
  },
});
process.stdout.write(`parley-bench: listening on ${server.url} (fake ASR and TTS)\n`);

// The server's event-loop delay since the last report, on SIGUSR2 (bench code, not the server's):
// a late event loop is what makes the downlink pacer (a 5 ms tick) send late.
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const gc = { count: 0, totalMs: 0, maxMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gc.count += 1;
    gc.totalMs += entry.duration;
    gc.maxMs = Math.max(gc.maxMs, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });
process.on('SIGUSR2', () => {
  const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
  const sorted = lateness.splice(0).sort((a, b) => a - b);
  const at = (q: number): number => (sorted.length ? Math.round((sorted[Math.min(sorted.length - 1, Math.ceil((q / 100) * sorted.length) - 1)] as number) * 100) / 100 : 0);
  const report = { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max), pacer: { n: sorted.length, p50: at(50), p99: at(99), max: at(100) }, gc: { count: gc.count, totalMs: Math.round(gc.totalMs), maxMs: Math.round(gc.maxMs * 10) / 10 } };
  gc.count = 0;
  gc.totalMs = 0;
  gc.maxMs = 0;
  process.stdout.write(`parley-bench: event-loop-delay ${JSON.stringify(report)}\n`);
  delay.reset();
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

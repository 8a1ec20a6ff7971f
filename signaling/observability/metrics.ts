import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { SESSION_ERRORS, TOOL_ERRORS, WS_ERRORS } from '../../session/protocol/errors.ts';
import { TURN_STAGES } from '../../session/protocol/turn-metrics.ts';
import { TOOL_OUTCOMES } from '../../session/tools/types.ts';
import { mediaWorkerPools } from '../../media/webrtc/worker-peer.ts';
import { setMediaStatsHooks } from '../../media/media-stats.ts';
import { FineHistogram } from './fine-histogram.ts';
import { BoundedHistogram, CounterFamily, HistogramFamily } from './metric-families.ts';

/**
 * Every metric the process exposes at /metrics: prom-client's defaults (process CPU and memory,
 * event-loop lag, GC) and ours, named parley_<noun>_<unit>. Label values come from closed sets
 * (a transport, a stage, an error code...), never a session id or anything a user typed.
 * One registry per process: its sessions, media workers and providers are the process's. What is
 * recorded per turn, per provider call or per frame uses metric-families.ts; the rest prom-client.
 */
export interface ParleyMetrics {
  registry: Registry;
  sessionsActive: Gauge<'transport' | 'modality'>;
  sessionsTotal: Counter<'close_code'>;
  turns: CounterFamily<'modality'>;
  turnStage: HistogramFamily<'stage'>;
  errors: Counter<'code'>;
  providerRequest: HistogramFamily<'provider' | 'kind' | 'status'>;
  resume: Counter<'outcome'>;
  toolCalls: CounterFamily<'outcome'>;
  /** Each paced downlink frame's lateness against its slot: the session pacer (websocket), RTP packets (webrtc). */
  downlinkLateness: HistogramFamily<'transport', FineHistogram>;
  /** WebRTC with media workers: the session pacer's handoff to the worker (absorbed by the worker's lead). */
  handoffLateness: HistogramFamily<never, FineHistogram>;
  webrtcConnect: Histogram;
  webrtcLost: Counter;
  webrtcJitter: Histogram;
  workerGc: HistogramFamily<never, FineHistogram>;
  vadFallback: Counter;
}

export const RESUME_OUTCOMES = ['resumed', 'unknown', 'refused'] as const;
export type ResumeOutcome = (typeof RESUME_OUTCOMES)[number];

/** Close codes the server or a well-behaved client uses; anything else counts as `other`. */
const CLOSE_CODES = new Set([1000, 1001, 1005, 1006, 1009, 1011, 1012, 1013, 4400, 4401, 4403, 4408, 4429]);
const ERROR_CODES = new Set(Object.keys({ ...WS_ERRORS, ...SESSION_ERRORS, ...TOOL_ERRORS }));

export function closeCodeLabel(code: number): string {
  return CLOSE_CODES.has(code) ? String(code) : 'other';
}

export function errorCodeLabel(code: string): string {
  return ERROR_CODES.has(code) ? code : 'other';
}

/** Stage durations run from milliseconds (text) to seconds (speech recognition, a slow model). */
const STAGE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
const LATENESS_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1];
const GC_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1];

let instance: ParleyMetrics | undefined;

/** The process's metrics; `processDefaults` false (a benchmark baseline) leaves out prom-client's own collectors. */
export function parleyMetrics(processDefaults = true): ParleyMetrics {
  return (instance ??= createMetrics(processDefaults));
}

function createMetrics(processDefaults: boolean): ParleyMetrics {
  const registry = new Registry();
  // The event-loop delay is sampled every 50 ms, not prom-client's 10: each sample wakes an idle
  // loop (about 45 µs of CPU on the busy development machine, 4.5 ms a second at 10 ms), and the
  // lateness that matters for audio is measured on every frame (parley_downlink_lateness_seconds).
  if (processDefaults) collectDefaultMetrics({ register: registry, gcDurationBuckets: GC_BUCKETS, eventLoopMonitoringPrecision: 50 });
  const registers = [registry];
  // Worker batches reach the hooks about once a second; a scrape asks for what is pending first
  // (once, however many metrics ask).
  let flushing: Promise<void> | undefined;
  const flushWorkers = (): Promise<void> =>
    (flushing ??= Promise.all(mediaWorkerPools().map((pool) => pool.flushStats())).then(() => {
      flushing = undefined;
    }));
  const collect = async (): Promise<void> => {
    await flushWorkers();
  };
  const fine = (): FineHistogram => new FineHistogram();
  const bounded = (): BoundedHistogram => new BoundedHistogram(STAGE_BUCKETS.map((b) => b * 1000));
  const metrics: ParleyMetrics = {
    registry,
    sessionsActive: new Gauge({ name: 'parley_sessions_active', help: 'Live sessions (from the accepted start frame to the close)', labelNames: ['transport', 'modality'], registers }),
    sessionsTotal: new Counter({ name: 'parley_sessions_total', help: 'Sessions ended, by WebSocket close code (other: a code outside the documented set)', labelNames: ['close_code'], registers }),
    turns: new CounterFamily('parley_turns_total', 'Assistant replies finished (done frames sent)', ['modality'], registry, undefined),
    turnStage: new HistogramFamily('parley_turn_stage_seconds', 'Duration of each stage of a turn (the per-turn waterfall; README: Observability)', ['stage'], STAGE_BUCKETS, registry, bounded),
    errors: new Counter({ name: 'parley_errors_total', help: 'Error frames sent, by code', labelNames: ['code'], registers }),
    providerRequest: new HistogramFamily(
      'parley_provider_request_seconds',
      'Provider calls from request to their last byte, by provider, kind (llm, asr, tts, search) and status (ok, aborted, the HTTP status of a refusal, or how it failed: timeout, stalled, unreachable, broken, malformed, ended_early, upstream_error, error)',
      ['provider', 'kind', 'status'],
      STAGE_BUCKETS,
      registry,
      bounded,
    ),
    resume: new Counter({ name: 'parley_resume_total', help: 'Start frames carrying a resume token, by outcome (resumed; unknown: expired, used or never issued; refused: another account or session)', labelNames: ['outcome'], registers }),
    toolCalls: new CounterFamily('parley_tool_calls_total', 'Tool calls the model made, by final outcome', ['outcome'], registry, undefined),
    downlinkLateness: new HistogramFamily('parley_downlink_lateness_seconds', 'How late each paced downlink frame left against its 20 ms slot (webrtc: RTP packets on the wire)', ['transport'], LATENESS_BOUNDS, registry, fine, collect),
    handoffLateness: new HistogramFamily('parley_webrtc_handoff_lateness_seconds', 'WebRTC with media workers: how late the session pacer handed frames to the worker (absorbed up to the worker lead)', [], LATENESS_BOUNDS, registry, fine),
    webrtcConnect: new Histogram({ name: 'parley_webrtc_connect_seconds', help: 'WebRTC calls: webrtc_offer received to the peer connection connected', buckets: [0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 5, 10, 30], registers }),
    webrtcLost: new Counter({ name: 'parley_webrtc_packets_lost_total', help: 'Uplink RTP packets given up as lost by the jitter buffer', registers, collect }),
    webrtcJitter: new Histogram({ name: 'parley_webrtc_jitter_seconds', help: 'Uplink interarrival jitter (RFC 3550) of each call, sampled about once a second', buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2], registers, collect }),
    vadFallback: new Counter({ name: 'parley_vad_fallback_frames_total', help: 'Uplink 20 ms frames decided by fvad because the Silero thread fell more than 320 ms behind', registers }),
    workerGc: new HistogramFamily('parley_media_worker_gc_seconds', 'Garbage-collection pauses of the WebRTC media worker threads', [], GC_BUCKETS.filter((b) => b <= 0.1), registry, fine, collect),
  };
  // Closed label sets start at zero, so dashboards and alerts see every series from the first scrape.
  for (const modality of ['voice', 'text']) metrics.turns.of(modality);
  for (const [transport, modality] of [['websocket', 'voice'], ['websocket', 'text'], ['webrtc', 'voice']] as const) metrics.sessionsActive.inc({ transport, modality }, 0);
  for (const stage of TURN_STAGES) metrics.turnStage.of(stage);
  for (const outcome of RESUME_OUTCOMES) metrics.resume.inc({ outcome }, 0);
  for (const outcome of TOOL_OUTCOMES) metrics.toolCalls.of(outcome);
  for (const code of ERROR_CODES) metrics.errors.inc({ code }, 0);
  for (const code of CLOSE_CODES) metrics.sessionsTotal.inc({ close_code: String(code) }, 0);
  metrics.downlinkLateness.of('websocket');
  metrics.handoffLateness.of();
  const rtp = metrics.downlinkLateness.of('webrtc');
  const workerGc = metrics.workerGc.of();
  setMediaStatsHooks({
    rtpLate: (ms) => rtp.record(ms),
    uplinkLost: () => metrics.webrtcLost.inc(),
    uplinkJitter: (ms) => metrics.webrtcJitter.observe(ms / 1000),
    workerGc: (ms) => workerGc.record(ms),
    vadFallback: (frames) => metrics.vadFallback.inc(frames),
  });
  return metrics;
}

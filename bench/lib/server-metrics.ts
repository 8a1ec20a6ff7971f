import { mediaWorkerPools } from '../../media/webrtc/worker-peer.ts';
import { summarize, type HistogramSnapshot, type HistogramSummary } from '../../signaling/observability/fine-histogram.ts';
import type { ParleyMetrics } from '../../signaling/observability/metrics.ts';

/**
 * What the benchmark server reports per window, read from the same metrics /metrics serves: the
 * downlink lateness histograms (websocket frames, WebRTC packets, the media-worker handoff), the
 * media workers' GC pauses, and the main thread's GC pauses (prom-client's
 * nodejs_gc_duration_seconds, whose buckets bound the longest pause).
 */
export interface WindowMetrics {
  /** The downlink's send lateness: websocket frames or WebRTC packets, whichever the window carried. */
  pacer: HistogramSummary;
  handoff: HistogramSummary;
  workerGc: HistogramSummary;
  gc: { count: number; totalMs: number; maxMs: number };
}

interface Snapshot {
  websocket: HistogramSnapshot;
  webrtc: HistogramSnapshot;
  handoff: HistogramSnapshot;
  workerGc: HistogramSnapshot;
  gc: Map<string, number>;
}

export class ServerMetricsWindow {
  private last: Snapshot | undefined;

  constructor(private readonly metrics: ParleyMetrics) {}

  /** The window since the previous call (or since start). */
  async next(): Promise<WindowMetrics> {
    await Promise.all(mediaWorkerPools().map((pool) => pool.flushStats()));
    const now = await this.snapshot();
    const from = this.last;
    this.last = now;
    const websocket = summarize(now.websocket, from?.websocket);
    return {
      pacer: websocket.count > 0 ? websocket : summarize(now.webrtc, from?.webrtc),
      handoff: summarize(now.handoff, from?.handoff),
      workerGc: summarize(now.workerGc, from?.workerGc),
      gc: gcSince(now.gc, from?.gc),
    };
  }

  private async snapshot(): Promise<Snapshot> {
    const m = this.metrics;
    const gc = new Map<string, number>();
    const metric = m.registry.getSingleMetric('nodejs_gc_duration_seconds');
    for (const v of (await metric?.get())?.values ?? []) {
      const { le } = v.labels as { le?: string | number };
      const key = (v as { metricName?: string }).metricName?.endsWith('_bucket') ? `le:${le}` : (v as { metricName?: string }).metricName?.endsWith('_sum') ? 'sum' : 'count';
      gc.set(key, (gc.get(key) ?? 0) + v.value);
    }
    return {
      websocket: m.downlinkLateness.of('websocket').snapshot(),
      webrtc: m.downlinkLateness.of('webrtc').snapshot(),
      handoff: m.handoffLateness.of().snapshot(),
      workerGc: m.workerGc.of().snapshot(),
      gc,
    };
  }
}

/** Count and total of the pauses between two snapshots; the longest is the lowest bucket bound holding them all. */
function gcSince(now: Map<string, number>, from: Map<string, number> | undefined): WindowMetrics['gc'] {
  const delta = (key: string): number => (now.get(key) ?? 0) - (from?.get(key) ?? 0);
  const count = delta('count');
  const bounds = [...now.keys()].filter((k) => k.startsWith('le:') && k !== 'le:+Inf').map((k) => Number(k.slice(3))).sort((a, b) => a - b);
  const within = bounds.find((b) => delta(`le:${b}`) >= count);
  return { count, totalMs: Math.round(delta('sum') * 1000), maxMs: count === 0 ? 0 : within === undefined ? Number.POSITIVE_INFINITY : within * 1000 };
}

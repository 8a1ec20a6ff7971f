import type { Metric, Registry } from 'prom-client';

/**
 * Values in 0.25 ms buckets up to 100 ms (later ones share one more bucket), with their count,
 * sum and max: fixed memory and O(1) per value, cheap enough for every downlink frame of every
 * call (a prom-client observe costs about forty times more). Benchmarks read percentiles from it
 * between two snapshots; Prometheus reads it as a histogram over coarser bounds (FineHistogramFamily).
 */
const BUCKET_MS = 0.25;
/** 400 fine buckets below 100 ms, then the overflow. */
const BUCKETS = 401;

export interface HistogramSnapshot {
  counts: Uint32Array;
  count: number;
  sumMs: number;
  maxMs: number;
}

export interface HistogramSummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export class FineHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  private count = 0;
  private sumMs = 0;
  private maxMs = 0;

  record(ms: number): void {
    const value = ms > 0 ? ms : 0;
    const bucket = Math.min(BUCKETS - 1, Math.floor(value / BUCKET_MS));
    this.counts[bucket] = this.counts[bucket]! + 1;
    this.count += 1;
    this.sumMs += value;
    if (value > this.maxMs) this.maxMs = value;
  }

  snapshot(): HistogramSnapshot {
    return { counts: this.counts.slice(), count: this.count, sumMs: this.sumMs, maxMs: this.maxMs };
  }

  /** How many values so far were at most `ms` (to the bucket: a value in the bucket holding `ms` counts). */
  countAtMost(ms: number): number {
    const last = Math.min(BUCKETS - 1, Math.ceil(ms / BUCKET_MS) - 1);
    let n = 0;
    for (let i = 0; i <= last; i += 1) n += this.counts[i]!;
    return n;
  }

  get total(): { count: number; sumMs: number } {
    return { count: this.count, sumMs: this.sumMs };
  }
}

/**
 * The values recorded between two snapshots. Percentiles are bucket upper bounds (never
 * optimistic by more than 0.25 ms); the max is the highest bucket reached, or the exact max when
 * that is past the last bucket.
 */
export function summarize(to: HistogramSnapshot, from?: HistogramSnapshot): HistogramSummary {
  const count = to.count - (from?.count ?? 0);
  if (count <= 0) return { count: 0, p50: 0, p99: 0, max: 0 };
  const at = (i: number): number => to.counts[i]! - (from?.counts[i] ?? 0);
  const bound = (i: number): number => (i === BUCKETS - 1 ? round(to.maxMs) : (i + 1) * BUCKET_MS);
  const percentile = (q: number): number => {
    const rank = Math.ceil((q / 100) * count);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i += 1) {
      seen += at(i);
      if (seen >= rank) return Math.min(bound(i), round(to.maxMs));
    }
    return round(to.maxMs);
  };
  let top = BUCKETS - 1;
  while (top > 0 && at(top) === 0) top -= 1;
  return { count, p50: percentile(50), p99: percentile(99), max: Math.min(bound(top), round(to.maxMs)) };
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

/**
 * A Prometheus histogram (in seconds) whose series are FineHistograms, one per label value.
 * prom-client's registry takes any object with its metric shape; this one computes the buckets
 * at scrape time from the fine counts.
 */
export class FineHistogramFamily<L extends string = string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, FineHistogram>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly label: L | undefined,
    /** Upper bounds exported, in seconds (the fine buckets stop at 0.1 s). */
    private readonly bounds: readonly number[],
    registry: Registry,
    private readonly collect?: () => Promise<void>,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series for one label value (or the only one); create it once and keep it. */
  of(value = ''): FineHistogram {
    let histogram = this.series.get(value);
    if (!histogram) {
      histogram = new FineHistogram();
      this.series.set(value, histogram);
    }
    return histogram;
  }

  async get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> }> {
    await this.collect?.();
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
    for (const [value, histogram] of this.series) {
      const labels: Record<string, string> = this.label === undefined ? {} : { [this.label]: value };
      const { count, sumMs } = histogram.total;
      for (const bound of this.bounds) values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: bound }, value: histogram.countAtMost(bound * 1000) });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count });
      values.push({ metricName: `${this.name}_sum`, labels, value: sumMs / 1000 });
      values.push({ metricName: `${this.name}_count`, labels, value: count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

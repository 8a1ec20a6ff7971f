import type { HistogramSeries } from './metric-families.ts';

/**
 * Values in 0.25 ms buckets up to 100 ms (later ones share one more bucket), with their count,
 * sum and max: fixed memory and O(1) per value, cheap enough for every downlink frame of every
 * call (a prom-client observe costs about forty times more). Benchmarks read percentiles from it
 * between two snapshots; Prometheus reads it as a histogram over coarser bounds (metric-families.ts).
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

export class FineHistogram implements HistogramSeries {
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

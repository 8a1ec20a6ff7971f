/**
 * How late paced frames left, in 0.25 ms buckets up to 100 ms (later ones share the last
 * bucket): fixed memory and O(1) per frame, so it can stay on in production and be read by the
 * benchmark or an operator at any time.
 */
const BUCKET_MS = 0.25;
const BUCKETS = 400;

export interface LatenessSummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export class LatenessHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  private count = 0;
  private maxMs = 0;

  record(ms: number): void {
    const late = ms > 0 ? ms : 0;
    const bucket = Math.min(BUCKETS - 1, Math.floor(late / BUCKET_MS));
    this.counts[bucket] = (this.counts[bucket] ?? 0) + 1;
    this.count += 1;
    if (late > this.maxMs) this.maxMs = late;
  }

  /** Percentiles are bucket upper bounds (so never optimistic by more than 0.25 ms). */
  summary(): LatenessSummary {
    return { count: this.count, p50: this.percentile(50), p99: this.percentile(99), max: Math.round(this.maxMs * 100) / 100 };
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.maxMs = 0;
  }

  private percentile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil((q / 100) * this.count);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i += 1) {
      seen += this.counts[i] ?? 0;
      if (seen >= rank) return i === BUCKETS - 1 ? Math.round(this.maxMs * 100) / 100 : Math.min((i + 1) * BUCKET_MS, this.maxMs);
    }
    return this.maxMs;
  }
}

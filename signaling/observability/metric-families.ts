import type { Metric, Registry } from 'prom-client';

/**
 * Metrics recorded on hot paths (every turn, provider call, downlink frame): a prom-client
 * observe or inc with labels costs 1 to 2.5 µs (it hashes the labels each time), several per
 * turn, a few per cent of a typed turn's whole cost. These keep plain numbers per series, found
 * once by label values, and turn them into Prometheus series at scrape time. prom-client's
 * registry takes any object with its metric shape, so they sit beside its own metrics.
 */

/** One histogram series, in milliseconds. */
export interface HistogramSeries {
  record(ms: number): void;
  /** How many values so far were at most `ms` (`ms` one of the family's exported bounds). */
  countAtMost(ms: number): number;
  readonly total: { count: number; sumMs: number };
}

/** A series over fixed bounds (ms), one counter per bound and one past the last. */
export class BoundedHistogram implements HistogramSeries {
  private readonly counts: Float64Array;
  private count = 0;
  private sumMs = 0;

  constructor(private readonly boundsMs: readonly number[]) {
    this.counts = new Float64Array(boundsMs.length + 1);
  }

  record(ms: number): void {
    const value = ms > 0 ? ms : 0;
    let i = 0;
    while (i < this.boundsMs.length && value > this.boundsMs[i]!) i += 1;
    this.counts[i] = this.counts[i]! + 1;
    this.count += 1;
    this.sumMs += value;
  }

  countAtMost(ms: number): number {
    let n = 0;
    for (let i = 0; i < this.boundsMs.length && this.boundsMs[i]! <= ms; i += 1) n += this.counts[i]!;
    return n;
  }

  get total(): { count: number; sumMs: number } {
    return { count: this.count, sumMs: this.sumMs };
  }
}

interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/** What prom-client's registry reads from a metric. */
abstract class Family<L extends string, S> {
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { labels: Record<string, string>; value: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    registry: Registry,
    private readonly collect: (() => Promise<void>) | undefined,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  abstract readonly type: 'histogram' | 'counter';
  protected abstract create(): S;
  protected abstract samples(labels: Record<string, string>, value: S): Sample[];

  /** The series for these label values, in the order of the label names; find it once and keep it where you can. */
  protected find(values: readonly string[]): { value: S } {
    const key = values.length === 1 ? values[0]! : values.join('\u0001');
    let entry = this.series.get(key);
    if (!entry) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      entry = { labels, value: this.create() };
      this.series.set(key, entry);
    }
    return entry;
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    await this.collect?.();
    const values: Sample[] = [];
    for (const { labels, value } of this.series.values()) values.push(...this.samples(labels, value));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** A Prometheus histogram (seconds) over series kept in milliseconds (BoundedHistogram unless `make` says otherwise). */
export class HistogramFamily<L extends string = never, S extends HistogramSeries = HistogramSeries> extends Family<L, S> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly L[],
    /** Upper bounds exported, in seconds. */
    private readonly boundsS: readonly number[],
    registry: Registry,
    private readonly make: () => S,
    collect?: () => Promise<void>,
  ) {
    super(name, help, labelNames, registry, collect);
  }

  of(...values: string[]): S {
    return this.find(values).value;
  }

  protected create(): S {
    return this.make();
  }

  protected samples(labels: Record<string, string>, series: S): Sample[] {
    const { count, sumMs } = series.total;
    const out: Sample[] = this.boundsS.map((b) => ({ metricName: `${this.name}_bucket`, labels: { ...labels, le: b }, value: series.countAtMost(b * 1000) }));
    out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count });
    out.push({ metricName: `${this.name}_sum`, labels, value: sumMs / 1000 });
    out.push({ metricName: `${this.name}_count`, labels, value: count });
    return out;
  }
}

/** A Prometheus counter per label values. */
export class CounterFamily<L extends string> extends Family<L, { n: number }> {
  readonly type = 'counter';

  of(...values: string[]): { n: number } {
    return this.find(values).value;
  }

  inc(...values: string[]): void {
    this.find(values).value.n += 1;
  }

  protected create(): { n: number } {
    return { n: 0 };
  }

  protected samples(labels: Record<string, string>, counter: { n: number }): Sample[] {
    return [{ metricName: this.name, labels, value: counter.n }];
  }
}

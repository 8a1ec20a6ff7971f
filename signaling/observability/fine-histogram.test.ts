import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PromScrape } from '../testing/prom-scrape.ts';
import { FineHistogram, FineHistogramFamily, summarize } from './fine-histogram.ts';

describe('FineHistogram', () => {
  it('reports count, percentiles as bucket upper bounds, and the max, between two snapshots', () => {
    const h = new FineHistogram();
    h.record(99);
    const from = h.snapshot();
    for (let i = 0; i < 98; i += 1) h.record(0.1);
    h.record(7.3);
    h.record(42.01);
    h.record(-3); // early counts as on time
    expect(summarize(h.snapshot(), from)).toEqual({ count: 101, p50: 0.25, p99: 7.5, max: 42.25 });
    // From the start, the earlier 99 ms frame is the max.
    expect(summarize(h.snapshot())).toMatchObject({ count: 102, max: 99 });
    expect(summarize(h.snapshot(), h.snapshot())).toEqual({ count: 0, p50: 0, p99: 0, max: 0 });
  });

  it('keeps very late values in the last bucket without losing the max', () => {
    const h = new FineHistogram();
    h.record(250);
    expect(summarize(h.snapshot())).toEqual({ count: 1, p50: 250, p99: 250, max: 250 });
  });
});

describe('FineHistogramFamily (a Prometheus histogram over fine buckets)', () => {
  it('exports cumulative buckets, sum and count per label value, in seconds', async () => {
    const registry = new Registry();
    let collected = 0;
    const family = new FineHistogramFamily('test_lateness_seconds', 'lateness', 'transport', [0.001, 0.01, 0.1], registry, async () => {
      collected += 1;
    });
    const ws = family.of('websocket');
    for (const ms of [0.2, 0.9, 3, 9.9, 50, 400]) ws.record(ms);
    family.of('webrtc');
    const scrape = new PromScrape(await registry.metrics());
    expect(collected).toBe(1);
    expect(scrape.types.get('test_lateness_seconds')).toBe('histogram');
    const bucket = (le: string): number => scrape.value('test_lateness_seconds_bucket', { transport: 'websocket', le });
    expect([bucket('0.001'), bucket('0.01'), bucket('0.1'), bucket('+Inf')]).toEqual([2, 4, 5, 6]);
    expect(scrape.value('test_lateness_seconds_count', { transport: 'websocket' })).toBe(6);
    expect(scrape.value('test_lateness_seconds_sum', { transport: 'websocket' })).toBeCloseTo(0.464, 6);
    expect(scrape.value('test_lateness_seconds_count', { transport: 'webrtc' })).toBe(0);
  });
});

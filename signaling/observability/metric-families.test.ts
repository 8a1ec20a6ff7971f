import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PromScrape } from '../testing/prom-scrape.ts';
import { FineHistogram } from './fine-histogram.ts';
import { BoundedHistogram, CounterFamily, HistogramFamily } from './metric-families.ts';

describe('metric families (hot-path metrics beside prom-client\'s own)', () => {
  it('exposes fine histograms as cumulative buckets, sum and count per label value, in seconds', async () => {
    const registry = new Registry();
    let collected = 0;
    const family = new HistogramFamily('test_lateness_seconds', 'lateness', ['transport'], [0.001, 0.01, 0.1], registry, () => new FineHistogram(), async () => {
      collected += 1;
    });
    const ws = family.of('websocket');
    expect(family.of('websocket')).toBe(ws);
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

  it('bounded histograms count each value in the first bucket that holds it; several labels per series', async () => {
    const registry = new Registry();
    const bounds = [0.005, 0.05, 0.5];
    const family = new HistogramFamily('test_call_seconds', 'calls', ['provider', 'kind'], bounds, registry, () => new BoundedHistogram(bounds.map((b) => b * 1000)));
    const llm = family.of('openai', 'llm');
    for (const ms of [5, 5.01, 49, 500, 2000]) llm.record(ms);
    family.of('local', 'tts').record(1);
    const scrape = new PromScrape(await registry.metrics());
    const bucket = (le: string): number => scrape.value('test_call_seconds_bucket', { provider: 'openai', kind: 'llm', le });
    expect([bucket('0.005'), bucket('0.05'), bucket('0.5'), bucket('+Inf')]).toEqual([1, 3, 4, 5]);
    expect(scrape.value('test_call_seconds_count', { provider: 'local', kind: 'tts' })).toBe(1);
  });

  it('counters sit beside prom-client\'s in one exposition', async () => {
    const registry = new Registry();
    const turns = new CounterFamily('test_turns_total', 'turns', ['modality'], registry, undefined);
    new Counter({ name: 'test_other_total', help: 'other', registers: [registry] }).inc(2);
    turns.inc('voice');
    turns.inc('voice');
    turns.of('text');
    const text = await registry.metrics();
    expect(text).toContain('# TYPE test_turns_total counter');
    const scrape = new PromScrape(text);
    expect(scrape.value('test_turns_total', { modality: 'voice' })).toBe(2);
    expect(scrape.value('test_turns_total', { modality: 'text' })).toBe(0);
    expect(scrape.value('test_other_total')).toBe(2);
  });
});

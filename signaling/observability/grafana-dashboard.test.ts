import { PerformanceObserver } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openText, say } from '../testing/conversation.ts';
import { scrape, type PromScrape } from '../testing/prom-scrape.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';

/** deploy/grafana/parley.json queries only metrics a real server exposes. */

const dashboard = JSON.parse(readFileSync(new URL('../../deploy/grafana/parley.json', import.meta.url), 'utf8')) as {
  panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
};
const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((target) => ({ panel: p.title, expr: target.expr })));

/** The metric names a PromQL expression reads: identifiers that are neither functions, keywords, label names nor values. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // grouping labels
    .replace(/\[[^\]]*\]/g, ''); // ranges
  const names = [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)]
    .filter((m) => !/^\s*\(/.test(bare.slice(m.index + m[0].length)) && !/[\d.]$/.test(bare.slice(0, m.index)))
    .map((m) => m[0]);
  return names.filter((n) => !['and', 'or', 'unless', 'bool', 'offset'].includes(n));
}

let t: TestServer;
let scraped: PromScrape;
beforeAll(async () => {
  t = await startTestServer();
  const { client } = await openText(t, { greeting: false });
  await say(client, 'hello');
  client.close();
  // Garbage enough for a few collections: the GC histogram has no series before the first one.
  // Collections are reported asynchronously: wait until one is observed here too.
  const collected = new Promise<void>((resolve) => {
    const observer = new PerformanceObserver(() => {
      observer.disconnect();
      resolve();
    });
    observer.observe({ entryTypes: ['gc'] });
  });
  let keep: unknown[] = [];
  for (let i = 0; i < 300_000; i += 1) {
    keep.push({ i });
    if (keep.length > 1000) keep = [];
  }
  await collected;
  // Every observer of that collection (prom-client's too) is told in the same pass.
  await new Promise((resolve) => setImmediate(resolve));
  scraped = await scrape(t.url);
});
afterAll(async () => {
  await t?.stop();
});

describe('the Grafana dashboard', () => {
  it('reads metric names the way PromQL does', () => {
    expect(metricNames('histogram_quantile(0.95, sum by (le, stage) (rate(parley_turn_stage_seconds_bucket{stage="x y"}[$__rate_interval])))')).toEqual(['parley_turn_stage_seconds_bucket']);
    expect(metricNames('nodejs_eventloop_lag_p99_seconds')).toEqual(['nodejs_eventloop_lag_p99_seconds']);
  });

  it('has panels, each with a query, and every metric they query is in a real scrape', () => {
    expect(exprs.length).toBeGreaterThan(15);
    const present = new Set(scraped.samples.map((s) => s.name));
    for (const { panel, expr } of exprs) {
      const names = metricNames(expr);
      expect(names.length, `${panel}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(present.has(name), `${panel}: ${name} is not in /metrics`).toBe(true);
    }
  });

  it('covers every metric of ours', () => {
    const queried = new Set(exprs.flatMap(({ expr }) => metricNames(expr)).map((n) => n.replace(/_(bucket|count|sum)$/, '')));
    const ours = [...scraped.types.keys()].filter((n) => n.startsWith('parley_'));
    expect(ours.filter((n) => !queried.has(n))).toEqual([]);
  });
});

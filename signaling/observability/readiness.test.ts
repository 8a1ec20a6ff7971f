import { describe, expect, it } from 'vitest';
import { Readiness } from './readiness.ts';

describe('Readiness', () => {
  it('runs every check side by side; one failing or too slow makes the whole unready, each says why', async () => {
    const readiness = new Readiness(50);
    readiness.add('redis', async () => undefined);
    readiness.add('postgres', async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    });
    readiness.add('tts', () => new Promise(() => undefined));
    const started = performance.now();
    const report = await readiness.report(false);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(report.ready).toBe(false);
    expect(report.body.status).toBe('unready');
    expect(report.body).toEqual({
      status: 'unready',
      checks: { redis: 'ok', postgres: 'unreachable', tts: 'unreachable' },
      unreachable: ['postgres', 'tts'],
      errors: { postgres: 'connect ECONNREFUSED 127.0.0.1:5432', tts: 'no answer within 50 ms' },
    });
  });

  it('is not ready while draining, without running the checks; concurrent probes share one run', async () => {
    const readiness = new Readiness(1000);
    let runs = 0;
    // The check answers when the test says so: both probes below arrive while it runs.
    let answer!: () => void;
    readiness.add('redis', () => {
      runs += 1;
      return new Promise<void>((resolve) => (answer = resolve));
    });
    expect(await readiness.report(true)).toEqual({ ready: false, body: { status: 'draining', checks: {} } });
    expect(runs).toBe(0);
    const probes = Promise.all([readiness.report(false), readiness.report(false)]);
    answer();
    const [a, b] = await probes;
    expect(runs).toBe(1);
    expect(a).toEqual(b);
    expect(a.ready).toBe(true);
  });
});

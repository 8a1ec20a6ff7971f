import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../testing/conversation.ts';
import { stateEngines } from '../testing/state-engines.ts';
import { createRateCounter } from './rate-counter.ts';

/** Rate counters in memory and on a real Redis: at the limit, one past it, shared across processes. */
describe.each(stateEngines())('RateCounter on $name', (engine) => {
  afterAll(() => engine.cleanup());

  it('allows `points` per window per key, then refuses with the time until the window ends', async () => {
    const counter = createRateCounter('starts', 3, 60, await engine.connection());
    for (let i = 0; i < 3; i += 1) expect(await counter.consume('acme')).toEqual({ allowed: true });
    const refused = await counter.consume('acme');
    expect(refused.allowed).toBe(false);
    expect(!refused.allowed && refused.retryAfterMs).toBeGreaterThan(55_000);
    expect(!refused.allowed && refused.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(await counter.consume('beta')).toEqual({ allowed: true });
  });

  it('two processes share one count only through Redis', async () => {
    const first = await engine.connection();
    const a = createRateCounter('exchanges', 2, 60, first);
    const b = createRateCounter('exchanges', 2, 60, first ? await engine.connection(first) : undefined);
    expect(await a.consume('acme')).toEqual({ allowed: true });
    expect(await a.consume('acme')).toEqual({ allowed: true });
    expect((await a.consume('acme')).allowed).toBe(false);
    // The other process: refused too when they share Redis, a count of its own in memory.
    expect((await b.consume('acme')).allowed).toBe(engine.name === 'memory');
  });
});

describe.skipIf(!stateEngines().some((e) => e.name === 'redis'))('RateCounter on redis while Redis is down', () => {
  const engine = stateEngines().find((e) => e.name === 'redis')!;
  afterAll(() => engine.cleanup());

  it('counts in this process instead (neither failing open nor closed)', async () => {
    const connection = (await engine.connection())!;
    const counter = createRateCounter('down', 1, 60, connection);
    const server = await engine.server();
    await server.stop(true);
    try {
      await eventually(() => !connection.ready, 5000, 'the client to notice');
      expect(await counter.consume('acme')).toEqual({ allowed: true });
      expect((await counter.consume('acme')).allowed).toBe(false);
    } finally {
      await server.start();
    }
  }, 30_000);
});

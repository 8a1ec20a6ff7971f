import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

export type RateVerdict = { allowed: true } | { allowed: false; retryAfterMs: number };

/** Events per key (an account) in fixed windows: `points` per `durationS`. */
export interface RateCounter {
  consume(key: string): Promise<RateVerdict>;
}

export type RateCounterFactory = (name: string, points: number, durationS: number) => RateCounter;

/**
 * In-process counters on rate-limiter-flexible (fixed windows, per key), the library the
 * shared Redis counters use too: the same behaviour whichever holds the count.
 */
export const memoryRateCounter: RateCounterFactory = (name, points, durationS) => {
  const limiter = new RateLimiterMemory({ keyPrefix: name, points, duration: durationS });
  return {
    async consume(key) {
      try {
        await limiter.consume(key);
        return { allowed: true };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return { allowed: false, retryAfterMs: Math.max(1, rejection.msBeforeNext) };
        throw rejection;
      }
    },
  };
};

import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RedisConnection } from './redis/redis-connection.ts';

export type RateVerdict = { allowed: true } | { allowed: false; retryAfterMs: number };

/** A counter of events per key (an account) in a sliding-free fixed window: `points` per `durationS`. */
export interface RateCounter {
  consume(key: string): Promise<RateVerdict>;
}

export interface LimiterOptions {
  points: number;
  durationS: number;
  /** Once over, the key stays refused this long (0: until the window ends). */
  blockDurationS?: number;
}

/**
 * A rate-limiter-flexible limiter: in memory by default, in Redis when configured (one count
 * across every process). While Redis is unreachable its insurance limiter counts in this
 * process, so limits degrade to per-process instead of failing open or closed.
 */
export function createRateLimiter(name: string, options: LimiterOptions, redis: RedisConnection | undefined): RateLimiterAbstract {
  const shape = { points: options.points, duration: options.durationS, blockDuration: options.blockDurationS ?? 0 };
  const local = new RateLimiterMemory({ keyPrefix: name, ...shape });
  return redis ? new RateLimiterRedis({ storeClient: redis.client, keyPrefix: redis.key(`rate:${name}`), ...shape, insuranceLimiter: local }) : local;
}

/** Rate counters on createRateLimiter. */
export function createRateCounter(name: string, points: number, durationS: number, redis: RedisConnection | undefined): RateCounter {
  const limiter = createRateLimiter(name, { points, durationS }, redis);
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
}

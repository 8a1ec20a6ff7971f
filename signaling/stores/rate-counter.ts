import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RedisConnection } from './redis/redis-connection.ts';

export type RateVerdict = { allowed: true } | { allowed: false; retryAfterMs: number };

/** A counter of events per key (an account) in a sliding-free fixed window: `points` per `durationS`. */
export interface RateCounter {
  consume(key: string): Promise<RateVerdict>;
}

/**
 * Rate counters on rate-limiter-flexible: in memory by default, in Redis when configured (one
 * count across every process). While Redis is unreachable its insurance limiter counts in this
 * process, so limits degrade to per-process instead of failing open or closed.
 */
export function createRateCounter(name: string, points: number, durationS: number, redis: RedisConnection | undefined): RateCounter {
  const local = new RateLimiterMemory({ keyPrefix: name, points, duration: durationS });
  const limiter: RateLimiterAbstract = redis
    ? new RateLimiterRedis({ storeClient: redis.client, keyPrefix: redis.key(`rate:${name}`), points, duration: durationS, insuranceLimiter: local })
    : local;
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

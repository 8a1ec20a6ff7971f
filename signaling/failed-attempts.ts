import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';

export type AttemptKind = 'key' | 'resume';

/**
 * Failed authentications and resume attempts, counted per client address (the per-connection
 * count lives with the connection). Past AUTH_FAILURES_PER_ADDRESS failures in
 * AUTH_FAILURE_WINDOW_S, an address is refused every further attempt, right or wrong, until the
 * window has passed: guessing keys or resume tokens stops being free. The counters are the
 * stores' rate limiter: in memory, or in Redis when configured, so an address is counted across
 * every process of the deployment.
 */
export class FailedAttempts {
  constructor(
    private readonly config: Pick<Config, 'AUTH_FAILURES_PER_ADDRESS' | 'AUTH_FAILURE_WINDOW_S'>,
    private readonly log: Logger,
    private readonly byAddress: RateLimiterAbstract,
  ) {}

  /** The limiter's shape for these settings: past the limit, blocked for the rest of a window. */
  static limiterOptions(config: Pick<Config, 'AUTH_FAILURES_PER_ADDRESS' | 'AUTH_FAILURE_WINDOW_S'>): { points: number; durationS: number; blockDurationS: number } {
    return { points: config.AUTH_FAILURES_PER_ADDRESS, durationS: config.AUTH_FAILURE_WINDOW_S, blockDurationS: config.AUTH_FAILURE_WINDOW_S };
  }

  /** Milliseconds until this address may try again, or undefined when it may now. */
  async refusedFor(address: string): Promise<number | undefined> {
    const state = await this.byAddress.get(address);
    if (!state || state.consumedPoints <= this.config.AUTH_FAILURES_PER_ADDRESS) return undefined;
    return Math.max(1, state.msBeforeNext);
  }

  /** Counts one failure and logs it with a fingerprint of what was tried, never the secret itself. */
  async failed(address: string, kind: AttemptKind, reason: string, tried: string | undefined, sessionId?: string): Promise<void> {
    let over = false;
    try {
      await this.byAddress.consume(address);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      over = true;
    }
    this.log.warn({ address, kind, reason, tried: fingerprint(tried), ...(sessionId ? { session_id: sessionId } : {}), limited: over }, `failed ${kind === 'key' ? 'authentication' : 'resume attempt'}`);
  }
}

/** `ck_…#1a2b3c4d`: the credential's kind and a short hash, enough to correlate log lines. */
export function fingerprint(secret: string | undefined): string | undefined {
  if (secret === undefined) return undefined;
  const kind = /^[a-z]{2}_/.exec(secret)?.[0] ?? '';
  return `${kind}…#${createHash('sha256').update(secret).digest('hex').slice(0, 8)}`;
}

/** The client's address: the socket peer, or the first X-Forwarded-For hop behind a trusted proxy. */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
    if (first) return first.slice(0, 64);
  }
  return req.socket.remoteAddress ?? 'unknown';
}

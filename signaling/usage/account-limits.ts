import type { AccountLimit } from '../../session/protocol/usage.ts';
import type { RateCounter } from '../stores/rate-counter.ts';

/** Builds a counter of `points` per `durationS` per key (the stores' rateCounter: memory or Redis). */
export type RateCounterFactory = (name: string, points: number, durationS: number) => RateCounter;
import type { AccountBook, LimitOverrides } from './usage-ports.ts';

export type LimitDefaults = Record<AccountLimit, number | undefined>;

export type LimitVerdict = { ok: true } | { ok: false; limit: AccountLimit; retryAfterMs: number; detail: string };

/** How long one account's overrides serve this process: a change by the CLI applies within it. */
const OVERRIDES_TTL_MS = 2000;

const OK: LimitVerdict = { ok: true };

const WINDOWS: Record<Exclude<AccountLimit, 'max_sessions'>, { durationS: number; what: string }> = {
  session_starts_per_minute: { durationS: 60, what: 'session starts per minute' },
  key_exchanges_per_minute: { durationS: 60, what: 'key exchanges per minute' },
  input_text_per_second: { durationS: 1, what: 'input_text frames per second' },
};

/**
 * The per-account limits: concurrent sessions, session starts and key exchanges per minute,
 * input_text frames per second. Each comes from the account's override (the CLI), else the
 * deployment's default (env), else there is none: a deployment that sets nothing is not limited.
 * Counters are rate-limiter-flexible's fixed windows (in this process, or shared through Redis);
 * concurrent sessions are counted by the live-session registry (LiveRecord.register).
 */
export class AccountLimits {
  private readonly overrides = new Map<string, { value: LimitOverrides; readAt: number }>();
  private readonly counters = new Map<string, RateCounter>();

  constructor(
    private readonly defaults: LimitDefaults,
    private readonly book: Pick<AccountBook, 'limits'>,
    private readonly counterFor: RateCounterFactory,
  ) {}

  /** The account's limit, or undefined when it has none. */
  async limitOf(account: string, limit: AccountLimit): Promise<number | undefined> {
    const override = (await this.overridesOf(account))[limit];
    const value = override ?? this.defaults[limit];
    return value === undefined || value === 0 ? undefined : value;
  }

  /** One more event against a windowed limit; refused past it with the time until its window ends. */
  async consume(account: string, limit: Exclude<AccountLimit, 'max_sessions'>): Promise<LimitVerdict> {
    const points = await this.limitOf(account, limit);
    if (points === undefined) return { ok: true };
    const verdict = await this.counter(limit, points).consume(account);
    if (verdict.allowed) return { ok: true };
    const { what } = WINDOWS[limit];
    return { ok: false, limit, retryAfterMs: verdict.retryAfterMs, detail: `over the account's limit of ${points} ${what}; retry in ${Math.ceil(verdict.retryAfterMs / 1000)} s` };
  }

  /**
   * input_text on the hot path: answered at once (no promise, so no frame waits) while the
   * account's overrides are fresh and say there is no limit, as in a deployment that sets none.
   */
  inputText(account: string): LimitVerdict | Promise<LimitVerdict> {
    const cached = this.overrides.get(account);
    if (cached && Date.now() - cached.readAt < OVERRIDES_TTL_MS && !(cached.value.input_text_per_second ?? this.defaults.input_text_per_second)) return OK;
    return this.consume(account, 'input_text_per_second');
  }

  /** MAX_SESSIONS_PER_ACCOUNT for the account as the live-session registry takes it: 0 for none. */
  async maxSessions(account: string): Promise<number> {
    return (await this.limitOf(account, 'max_sessions')) ?? 0;
  }

  private counter(limit: Exclude<AccountLimit, 'max_sessions'>, points: number): RateCounter {
    // One counter per limit and size: an account whose override changes starts a fresh window.
    const key = `${limit}:${points}`;
    let counter = this.counters.get(key);
    if (!counter) {
      counter = this.counterFor(limit, points, WINDOWS[limit].durationS);
      this.counters.set(key, counter);
    }
    return counter;
  }

  private async overridesOf(account: string): Promise<LimitOverrides> {
    const cached = this.overrides.get(account);
    if (cached && Date.now() - cached.readAt < OVERRIDES_TTL_MS) return cached.value;
    const value = await this.book.limits(account);
    this.overrides.set(account, { value, readAt: Date.now() });
    if (this.overrides.size > 10_000) this.overrides.clear();
    return value;
  }
}

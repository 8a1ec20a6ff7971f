import type { SessionDeps } from '../../session/session-deps.ts';
import type { Config } from '../config.ts';
import { AccountLimits } from './account-limits.ts';
import { CreditLines } from './credit-lines.ts';
import { LedgerWriter, type LedgerWriterLog } from './ledger-writer.ts';
import type { Stores } from '../stores/stores.ts';

export type UsageConfig = Pick<
  Config,
  | 'PRICES'
  | 'LOW_CREDIT_WARNING_S'
  | 'CLOSING_NOTICE_S'
  | 'MAX_SESSION_S'
  | 'IDLE_TIMEOUT_S'
  | 'MAX_SESSIONS_PER_ACCOUNT'
  | 'SESSION_STARTS_PER_MINUTE'
  | 'KEY_EXCHANGES_PER_MINUTE'
  | 'INPUT_TEXT_PER_SECOND'
>;

/**
 * One process's side of accounts and usage, on the deployment's stores: the ledger and its
 * writer, credit as this process sees it, the per-account limits (rate counters in memory or
 * Redis), and what each session is given to meter, warn and close.
 */
export class ServerUsage {
  readonly writer: LedgerWriter;
  readonly credit: CreditLines;
  readonly limits: AccountLimits;

  constructor(
    stores: Pick<Stores, 'ledger' | 'accounts' | 'rateCounter'>,
    private readonly config: UsageConfig,
    log: LedgerWriterLog,
  ) {
    this.writer = new LedgerWriter(stores.ledger, log, (accounts) => this.credit.forget(accounts));
    this.credit = new CreditLines(stores.accounts, (account) => this.writer.inFlight(account));
    this.limits = new AccountLimits(
      {
        max_sessions: config.MAX_SESSIONS_PER_ACCOUNT,
        session_starts_per_minute: config.SESSION_STARTS_PER_MINUTE,
        key_exchanges_per_minute: config.KEY_EXCHANGES_PER_MINUTE,
        input_text_per_second: config.INPUT_TEXT_PER_SECOND,
      },
      stores.accounts,
      stores.rateCounter,
    );
  }

  /** What a session of `account` is given: its ledger sink and prices, its closes, its credit watch. */
  sessionDeps(account: string, sessionId: string): Pick<SessionDeps, 'usage' | 'closing' | 'credit'> {
    const { config } = this;
    return {
      usage: { prices: config.PRICES, sink: { record: (entry) => this.writer.record({ ...entry, account, sessionId }) } },
      closing: {
        noticeMs: config.CLOSING_NOTICE_S * 1000,
        ...(config.IDLE_TIMEOUT_S === undefined ? {} : { idleMs: config.IDLE_TIMEOUT_S * 1000 }),
        ...(config.MAX_SESSION_S === undefined ? {} : { maxDurationMs: config.MAX_SESSION_S * 1000 }),
      },
      credit: { line: this.credit.lineFor(account), lowWarningS: config.LOW_CREDIT_WARNING_S },
    };
  }
}

import type { CreditLine } from '../../session/usage/credit-watch.ts';
import type { AccountBook } from './usage-ports.ts';

/** How long a balance read from the store serves this process: a top-up elsewhere shows within it. */
const BALANCE_TTL_MS = 1000;

interface Cached {
  balance: number | null;
  readAt: number;
  reading?: Promise<number | null>;
}

/**
 * Accounts' credit as this process sees it: the store's balance (read through, cached for a
 * second so a thousand sessions of one account cost one read a second, and a top-up made by the
 * CLI or another process counts within a second everywhere), less what this process spent but
 * has not written to the ledger yet.
 */
export class CreditLines {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly book: Pick<AccountBook, 'credit'>,
    /** Units spent on an account that are still on their way to the ledger. */
    private readonly inFlight: (account: string) => number,
  ) {}

  /** The account's balance now (null: unlimited); `fresh` reads the store. */
  async balance(account: string, fresh = false): Promise<number | null> {
    const stored = await this.stored(account, fresh);
    return stored === null ? null : stored - this.inFlight(account);
  }

  lineFor(account: string): CreditLine {
    return { balance: (fresh) => this.balance(account, fresh) };
  }

  /** The ledger took entries of these accounts off their balance: read them again next time. */
  forget(accounts: Iterable<string>): void {
    for (const account of accounts) this.cache.delete(account);
  }

  private stored(account: string, fresh: boolean): Promise<number | null> {
    const now = Date.now();
    const cached = this.cache.get(account);
    if (cached?.reading) return cached.reading;
    if (cached && !fresh && now - cached.readAt < BALANCE_TTL_MS) return Promise.resolve(cached.balance);
    const entry: Cached = cached ?? { balance: null, readAt: 0 };
    entry.reading = this.book.credit(account).then(
      (balance) => {
        entry.balance = balance;
        entry.readAt = Date.now();
        entry.reading = undefined;
        return balance;
      },
      (error: unknown) => {
        entry.reading = undefined;
        throw error;
      },
    );
    this.cache.set(account, entry);
    // The cache stays small: accounts are dropped once their reading is old.
    if (this.cache.size > 10_000) this.prune(now);
    return entry.reading;
  }

  private prune(now: number): void {
    for (const [account, cached] of this.cache) if (!cached.reading && now - cached.readAt > BALANCE_TTL_MS) this.cache.delete(account);
  }
}

import type { LedgerEntry, UsageLedger } from './usage-ports.ts';

export interface LedgerWriterLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Entries kept while the store cannot take them; past this the oldest go (logged), so memory stays bounded. */
const MAX_PENDING = 100_000;
const RETRY_MS = [500, 1000, 2000, 5000];

/**
 * Hands session usage to the ledger. Entries recorded in one turn of the event loop go in one
 * write (one transaction), so a busy server writes in batches. A write that fails keeps its
 * entries and tries again with backoff: nothing accepted is lost while the database is down
 * (bounded), and the log says so once. `inFlight` tells the credit line what is spent but not yet
 * taken off the balance.
 */
export class LedgerWriter {
  private pending: LedgerEntry[] = [];
  private revisions = new Map<string, LedgerEntry>();
  private scheduled = false;
  private writing: Promise<void> | undefined;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly unwritten = new Map<string, number>();

  constructor(
    private readonly ledger: UsageLedger,
    private readonly log: LedgerWriterLog,
    /** Called with each account whose entries were written (its balance changed). */
    private readonly written: (accounts: Set<string>) => void = () => undefined,
  ) {}

  record(entry: LedgerEntry): void {
    const waiting = this.pending.findLast((e) => e.id === entry.id);
    if (waiting) {
      // Revised before it was written: write the revision instead.
      this.addUnwritten(entry.account, entry.units - waiting.units);
      Object.assign(waiting, entry);
    } else if (this.recent.has(entry.id)) {
      // Already written (or being written): revise it, by the difference.
      const before = this.revisions.get(entry.id)?.units ?? this.recent.get(entry.id)!;
      this.addUnwritten(entry.account, entry.units - before);
      this.revisions.set(entry.id, entry);
    } else {
      this.addUnwritten(entry.account, entry.units);
      this.pending.push(entry);
      if (this.pending.length > MAX_PENDING) this.dropOldest();
    }
    this.schedule();
  }

  /** Units spent on `account` that are not in the ledger yet. */
  inFlight(account: string): number {
    return this.unwritten.get(account) ?? 0;
  }

  /** Writes everything pending (the drain, a test); resolves when the ledger has it or `timeoutMs` passed. */
  async flush(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    clearTimeout(this.retryTimer);
    while ((this.pending.length > 0 || this.revisions.size > 0 || this.writing) && Date.now() < deadline) {
      await (this.writing ?? this.write());
      if (this.failures > 0) await new Promise((r) => setTimeout(r, 50));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.writing || this.retryTimer) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.write();
    });
  }

  private write(): Promise<void> {
    const batch = this.pending;
    const revisions = [...this.revisions.values()];
    this.pending = [];
    this.revisions.clear();
    this.remember(batch);
    this.writing = (async () => {
      try {
        await this.ledger.record(batch);
        for (const entry of revisions) await this.ledger.revise(entry);
        for (const entry of batch) this.addUnwritten(entry.account, -entry.units);
        for (const entry of revisions) {
          this.addUnwritten(entry.account, -(entry.units - this.recent.get(entry.id)!));
          this.recent.set(entry.id, entry.units);
        }
        if (this.failures > 0) this.log.info({ entries: batch.length }, 'usage ledger reachable again: pending entries written');
        this.failures = 0;
        this.written(new Set([...batch, ...revisions].map((e) => e.account)));
      } catch (error) {
        // Keep them, in order, ahead of anything recorded meanwhile.
        this.pending = [...batch, ...this.pending];
        for (const entry of revisions) if (!this.revisions.has(entry.id)) this.revisions.set(entry.id, entry);
        if (this.failures === 0) this.log.warn({ err: error instanceof Error ? error.message : String(error), entries: batch.length }, 'writing usage to the ledger failed; kept, retrying');
        this.failures += 1;
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.schedule();
        }, RETRY_MS[Math.min(this.failures - 1, RETRY_MS.length - 1)]);
        this.retryTimer.unref();
      } finally {
        this.writing = undefined;
        if (this.failures === 0 && (this.pending.length > 0 || this.revisions.size > 0)) this.schedule();
      }
    })();
    return this.writing;
  }

  /**
   * Turn entries handed to the ledger lately, with their units as written, so a revision of one
   * (a playback report, seconds after its turn) is a revise() by the difference, not an insert.
   */
  private readonly recent = new Map<string, number>();

  private remember(batch: LedgerEntry[]): void {
    for (const entry of batch) if (entry.turnId !== null) this.recent.set(entry.id, entry.units);
    if (this.recent.size > 10_000) {
      const keep = [...this.recent].slice(-5_000);
      this.recent.clear();
      for (const [id, units] of keep) this.recent.set(id, units);
    }
  }

  private addUnwritten(account: string, units: number): void {
    const next = (this.unwritten.get(account) ?? 0) + units;
    if (Math.abs(next) < 1e-9) this.unwritten.delete(account);
    else this.unwritten.set(account, next);
  }

  private dropOldest(): void {
    const dropped = this.pending.splice(0, this.pending.length - MAX_PENDING);
    for (const entry of dropped) this.addUnwritten(entry.account, -entry.units);
    this.log.error({ dropped: dropped.length }, 'usage ledger unreachable for too long: the oldest unwritten entries were dropped');
  }
}

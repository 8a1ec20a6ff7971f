import type { StashEntry } from './snapshot.ts';

/** Who may resume an entry: the account and session id that stashed it. */
export interface StashOwner {
  account: string;
  sessionId: string;
}

export type TakeResult =
  | { status: 'resumed'; entry: StashEntry }
  /** Unknown, expired or already taken. */
  | { status: 'unknown' }
  /** Another account's or another session's token: refused and left for its owner. */
  | { status: 'not_owner' };

/**
 * Where conversations wait for their resume token. A token is single use: once taken it stays
 * taken (a tombstone) for the resume window, so a late save from the process that held the
 * conversation cannot bring it back. The port is async so a shared store (Redis) stands behind it
 * when several processes serve one deployment; the default lives in this process's memory and
 * is lost on restart, as SPEC says.
 */
export interface ResumeStash {
  /**
   * True when entries outlive this process and are seen by others: the connection then writes
   * the conversation through at every turn end, not only when it drops.
   */
  readonly shared: boolean;
  /**
   * Stores (or replaces) the entry for the resume window; 'taken' when the token was already
   * used. A shared stash serializes the entry before save() returns, so a caller may pass a
   * session's live objects (Session.view()); the memory stash keeps the object: pass a copy.
   */
  save(token: string, entry: StashEntry): Promise<'saved' | 'taken'>;
  /** Removes and returns the entry atomically when `owner` matches: a token works once. */
  take(token: string, owner: StashOwner): Promise<TakeResult>;
  /**
   * Puts back, under the same token, an entry this process took for a start that then did not
   * go through (its socket went away, the server began draining): the token works again.
   */
  giveBack(token: string, entry: StashEntry): Promise<void>;
  /** A clean end: the entry is not resumable any more. */
  discard(token: string): Promise<void>;
  /** Restarts the resume window of live conversations' entries (a shared stash's upkeep). */
  keepAlive(tokens: string[]): Promise<void>;
}

/** In-process stash: entries and tombstones expire with the resume window. */
export class MemoryResumeStash implements ResumeStash {
  readonly shared = false;
  private readonly entries = new Map<string, { entry: StashEntry | 'taken'; expiresAt: number }>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly ttlMs: number) {
    // One timer for all entries; lookups check expiry themselves, the sweep only frees memory.
    this.sweep = setInterval(() => this.dropExpired(), Math.max(1000, Math.min(ttlMs, 60_000)));
    this.sweep.unref();
  }

  /** Conversations waiting for their token (tombstones not counted). */
  get size(): number {
    let n = 0;
    for (const { entry, expiresAt } of this.entries.values()) if (entry !== 'taken' && expiresAt > Date.now()) n += 1;
    return n;
  }

  async save(token: string, entry: StashEntry): Promise<'saved' | 'taken'> {
    if (this.live(token)?.entry === 'taken') return 'taken';
    this.entries.set(token, { entry, expiresAt: Date.now() + this.ttlMs });
    return 'saved';
  }

  async take(token: string, owner: StashOwner): Promise<TakeResult> {
    const found = this.live(token);
    if (!found || found.entry === 'taken') return { status: 'unknown' };
    if (found.entry.account !== owner.account || found.entry.sessionId !== owner.sessionId) return { status: 'not_owner' };
    this.entries.set(token, { entry: 'taken', expiresAt: Date.now() + this.ttlMs });
    return { status: 'resumed', entry: found.entry };
  }

  async giveBack(token: string, entry: StashEntry): Promise<void> {
    this.entries.set(token, { entry, expiresAt: Date.now() + this.ttlMs });
  }

  async discard(token: string): Promise<void> {
    if (this.live(token)?.entry !== 'taken') this.entries.delete(token);
  }

  async keepAlive(tokens: string[]): Promise<void> {
    for (const token of tokens) {
      const found = this.live(token);
      if (found) found.expiresAt = Date.now() + this.ttlMs;
    }
  }

  close(): void {
    clearInterval(this.sweep);
  }

  private live(token: string): { entry: StashEntry | 'taken'; expiresAt: number } | undefined {
    const found = this.entries.get(token);
    return found && found.expiresAt > Date.now() ? found : undefined;
  }

  private dropExpired(): void {
    const now = Date.now();
    for (const [token, { expiresAt }] of this.entries) if (expiresAt <= now) this.entries.delete(token);
  }
}

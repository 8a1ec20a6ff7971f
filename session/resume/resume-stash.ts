import type { StashEntry } from './snapshot.ts';

/**
 * Where dropped conversations wait for their resume token. The port is async so a shared
 * store (Redis, for several processes behind a balancer) can stand behind it; the default lives
 * in this process's memory and is lost on restart, as SPEC says.
 */
export interface ResumeStash {
  put(token: string, entry: StashEntry, ttlMs: number): Promise<void>;
  /**
   * The entry without taking it, so a resuming start is fully checked before its token is
   * spent: a refused start (server_busy, invalid_tools…) leaves the token usable.
   */
  peek(token: string): Promise<{ entry: StashEntry; expiresAt: number } | undefined>;
  /** Removes and returns the entry atomically: a token works once. Undefined when unknown or expired. */
  take(token: string): Promise<{ entry: StashEntry; expiresAt: number } | undefined>;
  readonly size: number;
}

export class MemoryResumeStash implements ResumeStash {
  private readonly entries = new Map<string, { entry: StashEntry; expiresAt: number; timer: NodeJS.Timeout }>();

  get size(): number {
    return this.entries.size;
  }

  async put(token: string, entry: StashEntry, ttlMs: number): Promise<void> {
    this.drop(token);
    const timer = setTimeout(() => this.entries.delete(token), ttlMs);
    timer.unref();
    this.entries.set(token, { entry, expiresAt: Date.now() + ttlMs, timer });
  }

  async peek(token: string): Promise<{ entry: StashEntry; expiresAt: number } | undefined> {
    const found = this.entries.get(token);
    return found && found.expiresAt > Date.now() ? { entry: found.entry, expiresAt: found.expiresAt } : undefined;
  }

  async take(token: string): Promise<{ entry: StashEntry; expiresAt: number } | undefined> {
    const found = this.entries.get(token);
    if (!found) return undefined;
    this.drop(token);
    return found.expiresAt > Date.now() ? { entry: found.entry, expiresAt: found.expiresAt } : undefined;
  }

  private drop(token: string): void {
    const found = this.entries.get(token);
    if (!found) return;
    clearTimeout(found.timer);
    this.entries.delete(token);
  }
}

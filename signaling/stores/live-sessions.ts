/** A live session as the registry lists it. */
export interface LiveSession {
  /** Unique per connection: `<instance>/<n>`. */
  id: string;
  sessionId: string;
  account: string;
  /** The process holding it (host:pid:random). */
  instance: string;
  startedAt: string;
  modality: 'voice' | 'text';
  transport: 'websocket' | 'webrtc';
}

/**
 * Which process holds which session, across every process of a deployment: it backs the
 * per-account concurrency limit and the operator's listing. In Redis the entries are leases a
 * process renews while it lives, so a crashed process holds nothing for long; in memory they
 * are this process's own.
 */
export interface LiveSessionStore {
  /** The process's id in listings. */
  readonly instance: string;
  /**
   * Registers `session` unless its account already holds `limit` live sessions (0: no limit),
   * atomically across processes.
   */
  acquire(session: LiveSession, limit: number): Promise<'acquired' | 'over_limit'>;
  release(id: string): Promise<void>;
  countForAccount(account: string): Promise<number>;
  /** Live sessions, oldest first; one account's when given. */
  list(account?: string): Promise<LiveSession[]>;
  close(): Promise<void>;
}

/** The embedded registry: this process's sessions. */
export class MemoryLiveSessions implements LiveSessionStore {
  private readonly sessions = new Map<string, LiveSession>();

  constructor(readonly instance: string) {}

  async acquire(session: LiveSession, limit: number): Promise<'acquired' | 'over_limit'> {
    return acquireLocally(this.sessions, session, limit);
  }

  async release(id: string): Promise<void> {
    this.sessions.delete(id);
  }

  async countForAccount(account: string): Promise<number> {
    return countOf(this.sessions.values(), account);
  }

  async list(account?: string): Promise<LiveSession[]> {
    return [...this.sessions.values()].filter((s) => account === undefined || s.account === account);
  }

  async close(): Promise<void> {
    this.sessions.clear();
  }
}

/** The limit check of the in-process registry, also the Redis registry's fallback while Redis is away. */
export function acquireLocally(sessions: Map<string, LiveSession>, session: LiveSession, limit: number): 'acquired' | 'over_limit' {
  if (limit > 0 && countOf(sessions.values(), session.account) >= limit) return 'over_limit';
  sessions.set(session.id, session);
  return 'acquired';
}

function countOf(sessions: Iterable<LiveSession>, account: string): number {
  let n = 0;
  for (const s of sessions) if (s.account === account) n += 1;
  return n;
}

/**
 * Live connections of this process, for MAX_SESSIONS, the drain and the write-through upkeep.
 * A connection counts from its accepted start frame until it closes. (Which process holds which
 * session across the deployment is the LiveSessionStore's business: stores/live-sessions.ts.)
 */
export interface RegisteredSession {
  sessionId: string;
  /** The token of the conversation's current stash entry ('' before ready). */
  readonly resumeToken: string;
  /** Ends the connection: the conversation is stashed, then an error frame, then the close. */
  shutdown(code: 'server_restarting'): void;
  /** The drain will close it in `inMs`: session_closing_soon (reason restart). */
  warnRestart(inMs: number): void;
  /** Writes the conversation through to a shared stash now. */
  checkpoint(): void;
}

export class SessionRegistry {
  private readonly live = new Set<RegisteredSession>();
  /** Stash writes still under way, some from connections already gone: the drain waits for them. */
  private readonly writes = new Set<Promise<unknown>>();
  /** Starts between their start frame and a live session (or a refusal). */
  private readonly starts = new Set<Promise<unknown>>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.live.size;
  }

  /** Starts still being decided: a drain waits for them, since one may have taken a conversation. */
  get starting(): number {
    return this.starts.size;
  }

  trackStart(start: Promise<unknown>): void {
    this.starts.add(start);
    void start.finally(() => this.starts.delete(start));
  }

  /** False when the process is full. */
  tryAdd(session: RegisteredSession): boolean {
    if (this.live.size >= this.max) return false;
    this.live.add(session);
    return true;
  }

  remove(session: RegisteredSession): void {
    this.live.delete(session);
  }

  all(): RegisteredSession[] {
    return [...this.live];
  }

  track(write: Promise<unknown>): void {
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }

  async writesSettled(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }
}

/**
 * Live connections of this process, for MAX_SESSIONS and the drain. A connection counts from
 * its accepted start frame until it closes.
 */
export interface RegisteredSession {
  sessionId: string;
  /** Ends the connection: an error frame where the code says so, then the close. */
  shutdown(code: 'server_restarting'): void;
  /** The drain will close it in `inMs`: session_closing_soon (reason restart). */
  warnRestart(inMs: number): void;
}

export class SessionRegistry {
  private readonly live = new Set<RegisteredSession>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.live.size;
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
}

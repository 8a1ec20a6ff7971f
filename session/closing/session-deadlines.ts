import type { ClosingSchedule } from './closing-schedule.ts';

/** The closes a session plans for itself (signaling plans the others: key expiry, drain, credit). */
export interface DeadlineSettings {
  /** IDLE_TIMEOUT_S: no user input and no reply ending for this long → wrap-up (sign-off, close 1000 idle). */
  idleMs?: number;
  /** MAX_SESSION_S: the conversation's longest life, from its first start (resumes included) → close 1000 max_duration. */
  maxDurationMs?: number;
}

export interface DeadlineActions {
  wrapUp(): void;
  /** A wrap-up is under way (asked for by the client, or the idle one): idleness no longer counts. */
  wrappingUp(): boolean;
  close(code: number, reason: string): void;
}

/**
 * max_duration and idle, both announced ahead through the closing schedule. The idle notice goes
 * out at most half the idle time ahead, so a short IDLE_TIMEOUT_S does not put every pause under
 * a countdown; any user input calls it off and starts the wait again.
 */
export class SessionDeadlines {
  constructor(
    private readonly schedule: ClosingSchedule,
    private readonly settings: DeadlineSettings,
    private readonly actions: DeadlineActions,
  ) {}

  /** The session began; `openedAt` (epoch ms) is when the conversation first started. */
  begin(openedAt: number): void {
    const max = this.settings.maxDurationMs;
    if (max !== undefined) {
      this.schedule.plan('max_duration', openedAt + max - Date.now(), false, () => this.actions.close(1000, 'max_duration'));
    }
    this.activity();
  }

  /** The user spoke or typed, or a reply ended: the idle wait starts again. */
  activity(): void {
    const idle = this.settings.idleMs;
    if (idle === undefined || this.actions.wrappingUp()) return;
    this.schedule.plan('idle', idle, false, () => this.actions.wrapUp(), Math.min(this.schedule.noticeMs, idle / 2));
  }
}

import type { ClosingSchedule } from '../closing/closing-schedule.ts';
import type { ServerFrame } from '../protocol/server.ts';
import type { UsageMeter } from './usage-meter.ts';

/** The account's credit as the host keeps it (the ledger's balance, less what is still being written). */
export interface CreditLine {
  /** Units left, or null for an account without a balance (unlimited). `fresh` skips any cache. */
  balance(fresh?: boolean): Promise<number | null>;
}

export interface CreditSettings {
  line: CreditLine;
  /** LOW_CREDIT_WARNING_S: warn when the credit would last less than this at the current rate. */
  lowWarningS: number;
}

export interface CreditActions {
  send(frame: ServerFrame): void;
  /** The credit ran out: error credit_exhausted, close 4402 (resumable after a top-up). */
  exhausted(): void;
  log: { warn(obj: object, msg: string): void };
}

/** While a warning or a countdown is out, the balance is read this often, so a top-up shows at once. */
const CLOSE_WATCH_MS = 1000;
/** Otherwise at least this often (a balance set while the session runs, other sessions' spending). */
const IDLE_WATCH_MS = 10_000;

/**
 * Watches one session's account credit: `low_credit_warning` once per crossing below
 * LOW_CREDIT_WARNING_S of credit left at the session's current rate (lifted above by a top-up,
 * it may warn again later), and when the credit will be gone within the closing notice, a
 * `session_closing_soon` (reason credit) for the moment it runs out, then the close. A top-up
 * seen before then calls the close off.
 */
export class CreditWatch {
  private warned = false;
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private stopped = false;

  constructor(
    private readonly meter: Pick<UsageMeter, 'pendingUnits' | 'rate'>,
    private readonly schedule: ClosingSchedule,
    private readonly settings: CreditSettings,
    private readonly actions: CreditActions,
  ) {}

  /** Looks now (at the start, and after each turn's usage went to the ledger). */
  check(fresh = false): void {
    if (this.stopped || this.checking) return;
    this.checking = true;
    this.settings.line.balance(fresh).then(
      (balance) => {
        this.checking = false;
        this.evaluate(balance);
      },
      (error: unknown) => {
        // The store is down: the session goes on (nothing is refused on a guess), and the watch looks again.
        this.checking = false;
        this.actions.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'reading the credit balance failed');
        this.rearm(CLOSE_WATCH_MS * 5);
      },
    );
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private evaluate(balance: number | null): void {
    if (this.stopped) return;
    if (balance === null) {
      this.warned = false;
      this.schedule.cancel('credit');
      return this.rearm(IDLE_WATCH_MS);
    }
    const remaining = balance - this.meter.pendingUnits();
    const rate = this.meter.rate();
    const secondsLeft = remaining <= 0 ? 0 : rate > 0 ? remaining / rate : Infinity;
    if (secondsLeft < this.settings.lowWarningS) {
      if (!this.warned) {
        this.warned = true;
        this.actions.send({ type: 'low_credit_warning', remaining: round(remaining), seconds_left: Math.floor(secondsLeft), rate: round(rate) });
      }
    } else {
      this.warned = false;
    }
    const msLeft = secondsLeft * 1000;
    if (msLeft <= this.schedule.noticeMs) {
      // Planned once; a top-up moves it (or calls it off below), spending meanwhile does not.
      if (!this.schedule.planned('credit')) this.schedule.plan('credit', msLeft, true, () => this.runOut());
    } else if (this.schedule.planned('credit')) {
      this.schedule.cancel('credit');
    }
    if (this.warned || this.schedule.planned('credit')) {
      // The next look also falls when the notice is due, not up to a look after it.
      const untilNotice = msLeft > this.schedule.noticeMs ? msLeft - this.schedule.noticeMs + 1 : CLOSE_WATCH_MS;
      return this.rearm(Math.min(CLOSE_WATCH_MS, untilNotice));
    }
    // Next look when the credit would cross into the warning or the notice, at the latest IDLE_WATCH_MS.
    const untilThreshold = (secondsLeft - Math.max(this.settings.lowWarningS, this.schedule.noticeMs / 1000)) * 1000;
    this.rearm(Math.max(CLOSE_WATCH_MS, Math.min(IDLE_WATCH_MS, untilThreshold + 1)));
  }

  /** The planned moment came: one last fresh look, so a top-up that just landed still counts. */
  private runOut(): void {
    clearTimeout(this.timer);
    this.settings.line.balance(true).then(
      (balance) => {
        if (this.stopped) return;
        if (balance === null || balance - this.meter.pendingUnits() > 0) {
          this.actions.send({ type: 'session_closing_soon', reason: 'credit', closes_in_ms: 0, resumable: true, cancelled: true });
          return this.evaluate(balance);
        }
        this.stopped = true;
        this.actions.exhausted();
      },
      () => {
        // Unreadable at the last moment: the last known balance said it ran out.
        if (this.stopped) return;
        this.stopped = true;
        this.actions.exhausted();
      },
    );
  }

  private rearm(ms: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref?.();
  }
}

const round = (value: number): number => Math.round(value * 1000) / 1000;

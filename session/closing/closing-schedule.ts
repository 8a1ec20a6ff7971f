import type { ServerFrame } from '../protocol/server.ts';
import type { ClosingReason } from '../protocol/usage.ts';

export interface ClosingHooks {
  send(frame: ServerFrame): void;
  log: { info(obj: object, msg: string): void };
}

interface Plan {
  resumable: boolean;
  /** When the close is due, on performance.now()'s timeline. */
  at: number;
  /** How long before `at` the notice goes out. */
  leadMs: number;
  close: () => void;
  noticeTimer: NodeJS.Timeout | undefined;
  closeTimer: NodeJS.Timeout;
  noticed: boolean;
}

/** setTimeout's ceiling (about 24.8 days); a longer wait is re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Every close the server plans, announced ahead: `session_closing_soon` goes out `noticeMs`
 * before the close (or at once, with the true time left, when less is left), then the close runs.
 * One plan per reason; planning a reason again moves it (a later notice for a reason replaces the
 * earlier one), and a plan called off after its notice went out is announced as cancelled, so a
 * client's countdown never outlives the plan.
 */
export class ClosingSchedule {
  private readonly plans = new Map<ClosingReason, Plan>();
  private closed = false;

  constructor(
    private readonly hooks: ClosingHooks,
    /** CLOSING_NOTICE_S in milliseconds. */
    readonly noticeMs: number,
  ) {}

  /** Plans a close `inMs` from now; `leadMs` overrides how long ahead the notice goes (default noticeMs). */
  plan(reason: ClosingReason, inMs: number, resumable: boolean, close: () => void, leadMs = this.noticeMs): void {
    if (this.closed) return;
    const previous = this.plans.get(reason);
    this.stopTimers(previous);
    const at = performance.now() + Math.max(0, inMs);
    const plan: Plan = { resumable, at, leadMs, close, noticed: previous?.noticed ?? false, noticeTimer: undefined, closeTimer: this.closeTimer(reason, at) };
    this.plans.set(reason, plan);
    // A notice already out no longer holds: the close moved. Beyond the lead it is called off
    // (a new notice comes in time); within it a new notice with the new time replaces it.
    if (plan.noticed && inMs > leadMs) this.sendCancelled(reason, plan);
    plan.noticed = false;
    this.notice(reason, plan);
  }

  /** Announces a close someone else carries out (the drain) `inMs` from now. */
  announce(reason: ClosingReason, inMs: number, resumable: boolean): void {
    if (this.closed) return;
    this.hooks.send({ type: 'session_closing_soon', reason, closes_in_ms: Math.max(0, Math.round(inMs)), resumable });
  }

  /** Calls a planned close off; a client that was told of it hears it is cancelled. */
  cancel(reason: ClosingReason): void {
    const plan = this.plans.get(reason);
    if (!plan) return;
    this.stopTimers(plan);
    this.plans.delete(reason);
    if (plan.noticed) this.sendCancelled(reason, plan);
  }

  planned(reason: ClosingReason): boolean {
    return this.plans.has(reason);
  }

  /** Milliseconds until the close planned for `reason`, if any. */
  remainingMs(reason: ClosingReason): number | undefined {
    const plan = this.plans.get(reason);
    return plan ? Math.max(0, plan.at - performance.now()) : undefined;
  }

  /** The session is over: nothing planned runs. */
  close(): void {
    this.closed = true;
    for (const plan of this.plans.values()) this.stopTimers(plan);
    this.plans.clear();
  }

  private closeTimer(reason: ClosingReason, at: number): NodeJS.Timeout {
    return setTimeout(() => {
      const plan = this.plans.get(reason);
      if (!plan || this.closed) return;
      if (plan.at - performance.now() > 0) {
        plan.closeTimer = this.closeTimer(reason, plan.at);
        return;
      }
      this.plans.delete(reason);
      this.hooks.log.info({ reason }, 'closing the session as planned');
      plan.close();
    }, Math.min(Math.max(0, at - performance.now()), MAX_TIMER_MS));
  }

  /** Sends the plan's notice when its time has come, or waits for it. */
  private notice(reason: ClosingReason, plan: Plan): void {
    if (this.closed || this.plans.get(reason) !== plan) return;
    const wait = plan.at - plan.leadMs - performance.now();
    if (wait > 0) {
      plan.noticeTimer = setTimeout(() => this.notice(reason, plan), Math.min(wait, MAX_TIMER_MS));
      return;
    }
    plan.noticeTimer = undefined;
    plan.noticed = true;
    this.announce(reason, plan.at - performance.now(), plan.resumable);
  }

  private sendCancelled(reason: ClosingReason, plan: Plan): void {
    plan.noticed = false;
    this.hooks.send({ type: 'session_closing_soon', reason, closes_in_ms: 0, resumable: plan.resumable, cancelled: true });
  }

  private stopTimers(plan: Plan | undefined): void {
    if (!plan) return;
    clearTimeout(plan.noticeTimer);
    clearTimeout(plan.closeTimer);
  }
}

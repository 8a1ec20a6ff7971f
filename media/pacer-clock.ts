/**
 * One clock for every downlink in the process: ticks on a fixed 5 ms grid and asks each
 * registered pacer to send what is due. One timer instead of one per session keeps the event
 * loop quiet at scale.
 *
 * The grid is drift-free (each tick is scheduled for origin + k·interval, not "interval after the
 * last one ran"), and pacers put their frame deadlines on it (`align`). Together that makes every
 * frame due exactly when a tick runs, so a frame leaves as late as the event loop is, not up to a
 * whole period late at a phase that wanders from frame to frame (which a receiver sees as jitter).
 */
export interface Ticking {
  tick(now: number): void;
}

export class PacerClock {
  private readonly members = new Set<Ticking>();
  private timer: NodeJS.Timeout | undefined;
  private origin = 0;
  private due = 0;

  constructor(readonly intervalMs = 5) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  add(member: Ticking): void {
    this.members.add(member);
    if (!this.timer) {
      this.origin = performance.now();
      // The first tick is at the origin itself: a pacer starting now has a frame due there.
      this.due = this.origin - this.intervalMs;
      this.schedule();
    }
  }

  remove(member: Ticking): void {
    this.members.delete(member);
    if (this.members.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** The first grid instant at or after `t` (t itself when the clock is not running). */
  align(t: number): number {
    if (!this.timer) return t;
    const steps = Math.ceil((t - this.origin) / this.intervalMs - 1e-9);
    return this.origin + steps * this.intervalMs;
  }

  private schedule(): void {
    const now = performance.now();
    // Skip ticks the event loop already missed rather than running them back to back.
    const behind = Math.floor((now - this.due) / this.intervalMs);
    this.due += this.intervalMs * (behind + 1);
    this.timer = setTimeout(() => this.fire(), Math.max(1, this.due - now));
  }

  private fire(): void {
    // Node's timers count whole milliseconds from the loop's cached time, which can be stale by
    // however long the current callback has run, so a timer can fire early. Early frames would
    // be jitter too: wait for the grid instant (within a quarter millisecond).
    const now = performance.now();
    if (now < this.due - 0.25) {
      this.timer = setTimeout(() => this.fire(), Math.max(1, Math.floor(this.due - now)));
      return;
    }
    for (const m of this.members) m.tick(Math.max(now, this.due));
    if (this.timer) this.schedule();
  }
}

export const sharedPacerClock = new PacerClock();

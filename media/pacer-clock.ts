/**
 * One clock for every downlink in the process: a 5 ms tick that asks each registered pacer to
 * send what is due. One timer instead of one per session keeps the event loop quiet at scale.
 */
export interface Ticking {
  tick(now: number): void;
}

export class PacerClock {
  private readonly members = new Set<Ticking>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs = 5) {}

  add(member: Ticking): void {
    this.members.add(member);
    if (!this.timer) {
      this.timer = setInterval(() => {
        const now = performance.now();
        for (const m of this.members) m.tick(now);
      }, this.intervalMs);
    }
  }

  remove(member: Ticking): void {
    this.members.delete(member);
    if (this.members.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

export const sharedPacerClock = new PacerClock();

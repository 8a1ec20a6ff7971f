/** How often the recorder looks at the clock: a longer wait between two looks is a stall. */
const TICK_MS = 5;

/**
 * When this process's event loop stood still during a real-time test, and for how long. A test
 * that hosts the server in its own process sees a stall as a silence on the wire: the server's
 * pacer sends nothing and the client reads nothing until the loop runs again, though the product
 * paused nothing. `longestWithin` gives the stall to leave out of a silence before judging it:
 * the longest one, since a silence lasts as long as its longest stall, while the many short waits
 * of a busy machine, summed, would hide a real pause. The timer does not keep the process alive.
 */
export class LoopStalls {
  /** [from, to] in performance.now() time: the loop ran no timer in between. */
  private readonly stalls: Array<[number, number]> = [];
  private timer: NodeJS.Timeout | undefined;

  start(): this {
    let last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      // Up to 1 ms late is the timer's own jitter.
      if (now - last > TICK_MS + 1) this.stalls.push([last + TICK_MS, now]);
      last = now;
    }, TICK_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The longest stall within [from, to] (the part of it inside), in ms. */
  longestWithin(from: number, to: number): number {
    return this.stalls.reduce((ms, [a, b]) => Math.max(ms, Math.min(b, to) - Math.max(a, from)), 0);
  }
}

/**
 * Waiting for something to arrive without polling: whoever records an arrival calls notify(),
 * and every wait re-checks its condition then. Works the same on the real clock and on vitest's
 * fake one (the timeout is then simulated time).
 */
export class Arrivals {
  private waiters: Array<() => boolean> = [];

  notify(): void {
    this.waiters = this.waiters.filter((attempt) => !attempt());
  }

  /**
   * Resolves with check()'s first defined value; rejects after `timeoutMs`, or as soon as
   * `failWhen()` returns a reason.
   */
  until<R>(check: () => R | undefined, timeoutMs: number, what: () => string, failWhen: () => string | undefined = () => undefined): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== attempt);
        reject(new Error(`timed out waiting for ${what()}`));
      }, timeoutMs);
      const attempt = (): boolean => {
        const found = check();
        const failed = found === undefined ? failWhen() : undefined;
        if (found === undefined && failed === undefined) return false;
        clearTimeout(timer);
        if (found !== undefined) resolve(found);
        else reject(new Error(`${failed} before ${what()}`));
        return true;
      };
      if (!attempt()) this.waiters.push(attempt);
    });
  }
}

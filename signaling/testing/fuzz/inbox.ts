export type Frame = { type: string; [key: string]: unknown };

/**
 * The frames one test socket received, and waits on them that wake on arrival (no polling):
 * a wait ends when its condition holds, the socket is no longer open, or its time is up.
 */
export class Inbox {
  readonly frames: Frame[] = [];
  private wake: (() => void) | undefined;

  constructor(private readonly open: () => boolean) {}

  push(frame: Frame): void {
    this.frames.push(frame);
    this.notify();
  }

  /** Something changed (a frame, a close): waits re-check their condition. */
  notify(): void {
    this.wake?.();
  }

  async until(done: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done() && this.open() && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** The first frame from index `after` on that matches, once it is there. */
  async waitFor(match: (f: Frame) => boolean, after: number, timeoutMs: number): Promise<Frame | undefined> {
    const find = (): Frame | undefined => this.frames.slice(after).find(match);
    await this.until(() => find() !== undefined, timeoutMs);
    return find();
  }
}

/**
 * Frames that arrive while something asynchronous is being decided (a start being opened, an
 * input_text waiting for its limit's verdict) wait here, then go through in arrival order. A
 * frame replayed that holds again (another verdict to wait for) puts the rest back behind it.
 */
export class FrameBacklog {
  private waiting: Array<{ bytes: Buffer; isBinary: boolean }> | undefined;

  constructor(private readonly deliver: (bytes: Buffer, isBinary: boolean) => void) {}

  /** Keeps the frame if something is pending; false when it should be handled now. */
  keep(bytes: Buffer, isBinary: boolean): boolean {
    if (!this.waiting) return false;
    this.waiting.push({ bytes, isBinary });
    return true;
  }

  /** Later frames wait until `pending` settles. */
  hold(pending: Promise<unknown>): void {
    this.waiting = [];
    void pending.finally(() => {
      const waiting = this.waiting ?? [];
      this.waiting = undefined;
      for (const [i, frame] of waiting.entries()) {
        this.deliver(frame.bytes, frame.isBinary);
        const again = this.waiting as typeof waiting | undefined;
        if (again) {
          again.push(...waiting.slice(i + 1));
          return;
        }
      }
    });
  }
}

import { libraryError } from './errors.ts';

interface Entry<M, T> {
  meta: M;
  resolve(value: T): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Requests waiting for an acknowledgement (inject_context_ack, tool_interaction_update_ack),
 * matched by what the request carried (`meta`) and timed out cleanly: a timed-out entry is
 * forgotten, so a late ack settles nothing and leaks nothing. Entries keep their send order,
 * which is the order the server answers in.
 */
export class PendingAcks<M, T> {
  private entries: Entry<M, T>[] = [];

  get size(): number {
    return this.entries.length;
  }

  wait(meta: M, timeoutMs: number, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: Entry<M, T> = {
        meta,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.remove(entry);
          reject(libraryError('ack_timeout', `no ${what} within ${timeoutMs} ms`, true));
        }, Math.max(0, timeoutMs)),
      };
      this.entries.push(entry);
    });
  }

  /**
   * Settles the first entry the matchers accept, trying each matcher in turn over all entries
   * (most specific first). Returns whether one was settled.
   */
  settle(value: T, ...matchers: Array<(meta: M) => boolean>): boolean {
    for (const matches of matchers) {
      const entry = this.entries.find((e) => matches(e.meta));
      if (entry) {
        this.remove(entry);
        entry.resolve(value);
        return true;
      }
    }
    return false;
  }

  /** Fails every waiting request (connection lost, client closed). */
  rejectAll(error: Error): void {
    const entries = this.entries;
    this.entries = [];
    for (const entry of entries) {
      clearTimeout(entry.timer);
      entry.reject(error);
    }
  }

  private remove(entry: Entry<M, T>): void {
    clearTimeout(entry.timer);
    this.entries = this.entries.filter((e) => e !== entry);
  }
}

/**
 * Resolves after `ms`, or at once when `signal` aborts. On the global timers (not
 * node:timers/promises), so the unit tests' fake clock paces the local model and the
 * adapters' retry backoff too.
 */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

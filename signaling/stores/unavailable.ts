/**
 * A shared store (PostgreSQL, Redis, or the SQLite file) could not answer. Callers turn it into
 * a retryable refusal (HTTP 503 with Retry-After, `store_unavailable` on the WebSocket); it is
 * never a crash and never a wrong answer such as "unknown key".
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';

  constructor(
    readonly store: 'postgres' | 'sqlite' | 'redis',
    cause: unknown,
  ) {
    super(`${store} is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export interface StoreLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * Runs a database's operations: a failure becomes StoreUnavailableError, and the log gets one
 * line when the database stops answering and one when it answers again (not one per request).
 */
export class EngineHealth {
  private down = false;

  constructor(
    readonly store: StoreUnavailableError['store'],
    private readonly log: StoreLog,
  ) {}

  async run<T>(operation: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await operation();
    } catch (error) {
      if (!this.down) {
        this.down = true;
        this.log.warn({ store: this.store, err: error instanceof Error ? error.message : String(error) }, `${this.store} unreachable: key checks and stored reports answer "store_unavailable" until it is back`);
      }
      throw new StoreUnavailableError(this.store, error);
    }
    if (this.down) {
      this.down = false;
      this.log.info({ store: this.store }, `${this.store} reachable again`);
    }
    return result;
  }
}

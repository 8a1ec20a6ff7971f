import { Redis } from 'ioredis';

type ScriptCall = (args: Array<string | number>) => Promise<unknown>;

/** A defined Lua script. */
export type Script = (keys: string[], args: Array<string | number>) => Promise<unknown>;

export interface RedisLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * One ioredis connection shared by the Redis-backed stores. Commands fail at once while Redis
 * is unreachable (no offline queue) and after `commandTimeoutMs` when it hangs, so a session
 * never waits long on it; ioredis reconnects on its own (backoff up to 2 s), and `onRecovered`
 * listeners run once it is back so the stores can re-register what this process holds. The
 * timeout is generous (3 s): on a busy event loop a short one fires even though the answer has
 * arrived, and an unanswered command may still have run. Every key starts with `prefix`.
 */
export class RedisConnection {
  readonly client: Redis;
  private down = false;
  private closing = false;
  private readonly recovered: Array<() => void> = [];

  constructor(
    url: string,
    readonly prefix: string,
    private readonly log: RedisLog,
    commandTimeoutMs = 3000,
  ) {
    this.client = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: commandTimeoutMs,
      connectTimeout: 2000,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    });
    this.client.on('ready', () => {
      if (!this.down) return;
      this.down = false;
      log.info({}, 'redis reachable again');
      for (const listener of this.recovered) listener();
    });
    // Without an 'error' listener ioredis would print every failed reconnect attempt.
    this.client.on('error', (error: Error) => this.markDown(error.message));
    this.client.on('close', () => this.markDown('connection closed'));
  }

  get ready(): boolean {
    return this.client.status === 'ready';
  }

  key(name: string): string {
    return `${this.prefix}${name}`;
  }

  /** Resolves when connected, or after `timeoutMs` (the server then starts degraded). */
  async waitReady(timeoutMs: number): Promise<boolean> {
    if (this.ready) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        this.markDown('not reachable at start');
        resolve(false);
      }, timeoutMs);
      const onReady = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.client.once('ready', onReady);
    });
  }

  onRecovered(listener: () => void): void {
    this.recovered.push(listener);
  }

  /** A Lua script run by EVALSHA (ioredis loads it again after a Redis restart). */
  script(name: string, lua: string): Script {
    this.client.defineCommand(name, { lua });
    const command = (this.client as unknown as Record<string, ScriptCall>)[name]!;
    // One array (ioredis flattens it), not spread arguments: a batch may carry many thousands.
    return (keys, args) => command.call(this.client, [keys.length, ...keys, ...args]);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.client.disconnect();
  }

  private markDown(reason: string): void {
    if (this.down || this.closing) return;
    this.down = true;
    this.log.warn({ reason }, 'redis unreachable: resume across processes and the shared session registry wait for it');
  }
}

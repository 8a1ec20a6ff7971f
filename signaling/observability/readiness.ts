import { connect } from 'node:net';

/** Throws (rejects) when the dependency cannot be reached; its message says why. */
export type ReadinessCheck = () => Promise<void>;

type CheckResult = { ok: true } | { ok: false; error: string };

export interface ReadinessReport {
  ready: boolean;
  /**
   * `checks` names each dependency `ok` or `unreachable`; `unreachable` lists the failing ones
   * and `errors` says why each failed (a refused connection, no answer within the timeout).
   */
  body: { status: 'ready' | 'draining' | 'unready'; checks: Record<string, 'ok' | 'unreachable'>; unreachable?: string[]; errors?: Record<string, string> };
}

/**
 * What /readyz answers: not ready from the moment a drain starts, nor while a configured
 * dependency (a store, a remote provider) cannot be reached. Stores and providers register a
 * check by name; every check runs at each probe, side by side, bounded by the timeout, and
 * concurrent probes share one run.
 */
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  private running: Promise<Record<string, CheckResult>> | undefined;

  constructor(private readonly timeoutMs: number) {}

  add(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  async report(draining: boolean): Promise<ReadinessReport> {
    if (draining) return { ready: false, body: { status: 'draining', checks: {} } };
    const results = await (this.running ??= this.runAll().finally(() => (this.running = undefined)));
    const checks: Record<string, 'ok' | 'unreachable'> = {};
    const errors: Record<string, string> = {};
    for (const [name, result] of Object.entries(results)) {
      checks[name] = result.ok ? 'ok' : 'unreachable';
      if (!result.ok) errors[name] = result.error;
    }
    const unreachable = Object.keys(errors);
    if (unreachable.length === 0) return { ready: true, body: { status: 'ready', checks } };
    return { ready: false, body: { status: 'unready', checks, unreachable, errors } };
  }

  private async runAll(): Promise<Record<string, CheckResult>> {
    const entries = await Promise.all([...this.checks].map(async ([name, check]) => [name, await this.run(check)] as const));
    return Object.fromEntries(entries);
  }

  private async run(check: ReadinessCheck): Promise<CheckResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([check(), timeout]);
      return { ok: true };
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A remote provider is reachable when its host accepts a TCP connection (no request is sent, nothing is billed). */
export function tcpReachable(baseUrl: string, timeoutMs: number): ReadinessCheck {
  const url = new URL(baseUrl);
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect({ host, port, timeout: timeoutMs });
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('timeout', () => {
        socket.destroy();
        reject(new Error(`${url.host}: no connection within ${timeoutMs} ms`));
      });
      socket.once('error', (error) => reject(new Error(`${url.host}: ${error.message}`)));
    });
}

/** A store's own check (stores/stores.ts: PostgreSQL answers a ping, Redis is connected). */
export function storeCheck(dependency: { name: string; check(): Promise<boolean> }): ReadinessCheck {
  return async () => {
    if (!(await dependency.check())) throw new Error(`${dependency.name} does not answer`);
  };
}

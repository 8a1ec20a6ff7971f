import { connect } from 'node:net';

/** Throws (rejects) when the dependency cannot be reached; its message says why. */
export type ReadinessCheck = () => Promise<void>;

export type CheckResult = { ok: true; ms: number } | { ok: false; ms: number; error: string };

export interface ReadinessReport {
  ready: boolean;
  body: { status: 'ready' | 'draining' | 'unready'; checks: Record<string, CheckResult> };
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
    const checks = await (this.running ??= this.runAll().finally(() => (this.running = undefined)));
    const ready = Object.values(checks).every((c) => c.ok);
    return { ready, body: { status: ready ? 'ready' : 'unready', checks } };
  }

  private async runAll(): Promise<Record<string, CheckResult>> {
    const entries = await Promise.all([...this.checks].map(async ([name, check]) => [name, await this.run(check)] as const));
    return Object.fromEntries(entries);
  }

  private async run(check: ReadinessCheck): Promise<CheckResult> {
    const started = performance.now();
    const ms = (): number => Math.round(performance.now() - started);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([check(), timeout]);
      return { ok: true, ms: ms() };
    } catch (error) {
      return { ok: false, ms: ms(), error: error instanceof Error ? error.message : String(error) };
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

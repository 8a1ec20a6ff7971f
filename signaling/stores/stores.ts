import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { MemoryResumeStash, type ResumeStash } from '../../session/resume/resume-stash.ts';
import type { Config } from '../config.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { JsonLinesReportStore, type ReportStore } from '../one-shot-store.ts';
import { MemoryLiveSessions, type LiveSessionStore } from './live-sessions.ts';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { createRateCounter, createRateLimiter, type LimiterOptions, type RateCounter } from './rate-counter.ts';
import { RedisConnection } from './redis/redis-connection.ts';
import { RedisLiveSessions } from './redis/redis-live-sessions.ts';
import { RedisResumeStash } from './redis/redis-resume-stash.ts';
import type { AccountBook, UsageLedger } from '../usage/usage-ports.ts';
import { SqlAccountBook } from './sql/sql-account-book.ts';
import { openSqlDatabase, type SqlDatabase, type SqlSettings } from './sql/sql-database.ts';
import { SqlKeyStore } from './sql/sql-key-store.ts';
import { SqlReportStore } from './sql/sql-report-store.ts';
import { SqlUsageLedger } from './sql/sql-usage-ledger.ts';
import type { StoreLog } from './unavailable.ts';

/** One shared dependency as /readyz reports it. */
export interface DependencyCheck {
  name: string;
  check(): Promise<boolean>;
}

/** Everything a server process shares with the others of its deployment (or keeps alone). */
export interface Stores {
  keys: KeyStore;
  reports: ReportStore;
  /** Usage per turn, in the keys' database. */
  ledger: UsageLedger;
  /** Credit balances and per-account limit overrides, in the keys' database. */
  accounts: AccountBook;
  stash: ResumeStash;
  live: LiveSessionStore;
  /** A counter for a rate limit: `points` per `durationS` per key, across processes with Redis. */
  rateCounter(name: string, points: number, durationS: number): RateCounter;
  /** A rate-limiter-flexible limiter of its own shape, shared the same way. */
  rateLimiter(name: string, options: LimiterOptions): RateLimiterAbstract;
  /** The configured engines, for readiness. */
  checks: DependencyCheck[];
  /** Runs after Redis was unreachable and answers again (its contents may have been lost). */
  onSharedStateRecovered(listener: () => void): void;
  close(): Promise<void>;
}

export type StoreConfig = Pick<Config, 'DATA_DIR' | 'DATABASE_URL' | 'REDIS_URL' | 'REDIS_KEY_PREFIX' | 'RESUME_TTL_S' | 'SESSION_LEASE_MS' | 'REPORTS_MAX_BYTES' | 'REPORTS_MAX_ROWS'>;

/** How long the start waits for Redis before serving without it (degraded, logged). */
const REDIS_START_WAIT_MS = 3000;

/**
 * The one place stores are built: PostgreSQL when DATABASE_URL is set (else SQLite in
 * DATA_DIR), Redis when REDIS_URL is set (else this process's memory). The schema is migrated
 * first, under a lock, so processes starting together do not race; a database that cannot be
 * reached stops the start with its error.
 */
export async function createStores(config: StoreConfig, log: StoreLog): Promise<Stores> {
  const database = openSqlDatabase(config, log);
  let redis: RedisConnection | undefined;
  try {
    const applied = await database.migrate();
    if (applied.length > 0) log.info({ migrations: applied, engine: database.engine }, 'database schema migrated');
    const instance = `${hostname()}:${process.pid}:${randomBytes(2).toString('hex')}`;
    const ttlMs = config.RESUME_TTL_S * 1000;
    const checks: DependencyCheck[] = [];
    if (database.engine === 'postgres') checks.push({ name: 'postgres', check: () => database.ping() });
    let stash: ResumeStash = new MemoryResumeStash(ttlMs);
    let live: LiveSessionStore = new MemoryLiveSessions(instance);
    if (config.REDIS_URL) {
      const connection = new RedisConnection(config.REDIS_URL, config.REDIS_KEY_PREFIX, log);
      redis = connection;
      await connection.waitReady(REDIS_START_WAIT_MS);
      stash = new RedisResumeStash(connection, ttlMs);
      live = new RedisLiveSessions(connection, instance, config.SESSION_LEASE_MS);
      checks.push({ name: 'redis', check: async () => connection.ready });
    }
    return {
      keys: new SqlKeyStore(database),
      ledger: new SqlUsageLedger(database),
      accounts: new SqlAccountBook(database),
      reports: database.engine === 'postgres' ? new SqlReportStore(database, config.REPORTS_MAX_ROWS) : new JsonLinesReportStore(config.DATA_DIR, config.REPORTS_MAX_BYTES),
      stash,
      live,
      rateCounter: (name, points, durationS) => createRateCounter(name, points, durationS, redis),
      rateLimiter: (name, options) => createRateLimiter(name, options, redis),
      checks,
      onSharedStateRecovered: (listener) => redis?.onRecovered(listener),
      async close() {
        await live.close();
        if (stash instanceof MemoryResumeStash) stash.close();
        await redis?.close();
        await database.close();
      },
    };
  } catch (error) {
    await redis?.close();
    await database.close();
    throw error;
  }
}

/**
 * The operator's CLIs (keys, usage, credit, limits): the deployment's database as the servers
 * see it (PostgreSQL when DATABASE_URL is set, else SQLite in DATA_DIR), migrated first. Safe
 * beside running servers: migrations serialise (advisory lock / immediate transaction).
 */
export async function openCliDatabase(env: { DATA_DIR?: string | undefined; DATABASE_URL?: string | undefined }): Promise<SqlDatabase> {
  const settings: SqlSettings = { DATA_DIR: env.DATA_DIR || './data', DATABASE_URL: env.DATABASE_URL || undefined };
  const database = openSqlDatabase(settings);
  try {
    await database.migrate();
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

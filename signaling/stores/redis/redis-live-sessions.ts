import { acquireLocally, type LiveSession, type LiveSessionStore } from '../live-sessions.ts';
import { StoreUnavailableError } from '../unavailable.ts';
import type { RedisConnection } from './redis-connection.ts';

// Times come from Redis itself, so hosts with skewed clocks agree on which leases have expired.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// KEYS: all leases (zset id → expiry), lease details (hash), the account's leases (zset).
const ACQUIRE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local limit = tonumber(ARGV[3])
if limit > 0 and redis.call('ZCARD', KEYS[3]) >= limit then return 0 end
local expiry = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[3], expiry, ARGV[1])
redis.call('ZADD', KEYS[1], expiry, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
return 1`;

// KEYS: all leases, then one account zset per lease; ARGV: lease ms, then the lease ids.
// XX: a lease released meanwhile is not brought back.
const RENEW = `${NOW}
local expiry = now + tonumber(ARGV[1])
for i = 2, #KEYS do
  redis.call('ZADD', KEYS[1], 'XX', expiry, ARGV[i])
  redis.call('ZADD', KEYS[i], 'XX', expiry, ARGV[i])
end
return 1`;

// Leases of processes that died: dropped from the index, the details and their account's set.
const PURGE = `${NOW}
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 500)
for _, id in ipairs(dead) do
  local info = redis.call('HGET', KEYS[2], id)
  if info then redis.call('ZREM', ARGV[1] .. cjson.decode(info).account, id) end
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
end
return #dead`;

const RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1`;

const COUNT = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])`;

const LIST = `${NOW}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
local rows = {}
for i, id in ipairs(ids) do rows[i] = redis.call('HGET', KEYS[2], id) end
return rows`;

/**
 * The live-session registry in Redis. Each session is a lease of `leaseMs` that this process
 * renews every third of it; a process that dies stops renewing and its sessions fall out of
 * counts and listings within `leaseMs`. While Redis is unreachable, sessions are counted here
 * (the per-account limit then holds per process) and registered again once it is back.
 */
export class RedisLiveSessions implements LiveSessionStore {
  private readonly own = new Map<string, LiveSession>();
  private readonly renewTimer: NodeJS.Timeout;
  private readonly scripts;

  constructor(
    private readonly redis: RedisConnection,
    readonly instance: string,
    private readonly leaseMs: number,
  ) {
    this.scripts = {
      acquire: redis.script('parleyLeaseAcquire', ACQUIRE),
      renew: redis.script('parleyLeaseRenew', RENEW),
      purge: redis.script('parleyLeasePurge', PURGE),
      release: redis.script('parleyLeaseRelease', RELEASE),
      count: redis.script('parleyLeaseCount', COUNT),
      list: redis.script('parleyLeaseList', LIST),
    };
    this.renewTimer = setInterval(() => void this.renew(), Math.max(50, Math.floor(leaseMs / 3)));
    this.renewTimer.unref();
    redis.onRecovered(() => void this.registerAgain());
  }

  async acquire(session: LiveSession, limit: number): Promise<'acquired' | 'over_limit'> {
    try {
      const acquired = await this.scripts.acquire(this.keysOf(session.account), [session.id, this.leaseMs, limit, JSON.stringify(session)]);
      if (acquired !== 1) return 'over_limit';
      this.own.set(session.id, session);
      return 'acquired';
    } catch {
      return acquireLocally(this.own, session, limit);
    }
  }

  async release(id: string): Promise<void> {
    const session = this.own.get(id);
    if (!session) return;
    this.own.delete(id);
    // If Redis is away the lease simply expires.
    await this.scripts.release(this.keysOf(session.account), [id]).catch(() => undefined);
  }

  async countForAccount(account: string): Promise<number> {
    try {
      return Number(await this.scripts.count([this.accountKey(account)], []));
    } catch (error) {
      throw new StoreUnavailableError('redis', error);
    }
  }

  async list(account?: string): Promise<LiveSession[]> {
    let rows: unknown;
    try {
      rows = await this.scripts.list([this.redis.key('live'), this.redis.key('live:info')], []);
    } catch (error) {
      throw new StoreUnavailableError('redis', error);
    }
    return (rows as Array<string | null>)
      .flatMap((row) => (row === null ? [] : [JSON.parse(row) as LiveSession]))
      .filter((s) => account === undefined || s.account === account)
      .sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  async close(): Promise<void> {
    clearInterval(this.renewTimer);
    const ids = [...this.own.keys()];
    await Promise.all(ids.map((id) => this.release(id)));
  }

  private async renew(): Promise<void> {
    if (!this.redis.ready) return;
    const sessions = [...this.own.values()];
    try {
      if (sessions.length > 0) {
        await this.scripts.renew([this.redis.key('live'), ...sessions.map((s) => this.accountKey(s.account))], [this.leaseMs, ...sessions.map((s) => s.id)]);
      }
      await this.scripts.purge([this.redis.key('live'), this.redis.key('live:info')], [this.redis.key('live:account:')]);
    } catch {
      // Redis went away between the check and the call: the recovery re-registers everything.
    }
  }

  /** After an outage (Redis may have restarted empty): every session of this process again. */
  private async registerAgain(): Promise<void> {
    for (const session of [...this.own.values()]) {
      await this.scripts.acquire(this.keysOf(session.account), [session.id, this.leaseMs, 0, JSON.stringify(session)]).catch(() => undefined);
    }
  }

  private keysOf(account: string): string[] {
    return [this.redis.key('live'), this.redis.key('live:info'), this.accountKey(account)];
  }

  private accountKey(account: string): string {
    return this.redis.key(`live:account:${account}`);
  }
}

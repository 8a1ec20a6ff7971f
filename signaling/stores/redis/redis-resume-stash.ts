import type { ResumeStash, StashOwner, TakeResult } from '../../../session/resume/resume-stash.ts';
import type { StashEntry } from '../../../session/resume/snapshot.ts';
import { StoreUnavailableError } from '../unavailable.ts';
import type { RedisConnection } from './redis-connection.ts';

// One hash per token: state 'open' (owner + data) or 'taken' (a tombstone for the resume window).
const SAVE = `
if redis.call('HGET', KEYS[1], 'state') == 'taken' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'open', 'owner', ARGV[1], 'data', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

// Atomic single use: of two processes taking one token at the same moment, exactly one gets it.
const TAKE = `
local v = redis.call('HMGET', KEYS[1], 'state', 'owner', 'data')
if v[1] ~= 'open' then return {0} end
if v[2] ~= ARGV[1] then return {1} end
redis.call('HSET', KEYS[1], 'state', 'taken')
redis.call('HDEL', KEYS[1], 'owner', 'data')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {2, v[3]}`;

const DISCARD = `
if redis.call('HGET', KEYS[1], 'state') ~= 'taken' then redis.call('DEL', KEYS[1]) end
return 1`;

/**
 * The resume stash in Redis, shared by every process: a client dropped from one process resumes
 * on any other. Saves made while Redis is unreachable are held here and written when it is back
 * (a later take still sees them, within their window); takes need Redis and fail with
 * StoreUnavailableError meanwhile, so a client retries rather than losing its conversation.
 */
export class RedisResumeStash implements ResumeStash {
  readonly shared = true;
  private readonly held = new Map<string, { entry: StashEntry | 'discard'; expiresAt: number }>();
  private readonly saveScript;
  private readonly takeScript;
  private readonly discardScript;

  constructor(
    private readonly redis: RedisConnection,
    private readonly ttlMs: number,
  ) {
    this.saveScript = redis.script('parleyStashSave', SAVE);
    this.takeScript = redis.script('parleyStashTake', TAKE);
    this.discardScript = redis.script('parleyStashDiscard', DISCARD);
    redis.onRecovered(() => void this.flushHeld());
  }

  async save(token: string, entry: StashEntry): Promise<'saved' | 'taken'> {
    try {
      const saved = await this.saveScript([this.key(token)], [ownerOf(entry), JSON.stringify(entry), this.ttlMs]);
      this.held.delete(token);
      return saved === 1 ? 'saved' : 'taken';
    } catch {
      this.held.set(token, { entry, expiresAt: Date.now() + this.ttlMs });
      return 'saved';
    }
  }

  async take(token: string, owner: StashOwner): Promise<TakeResult> {
    // A save still held from an outage is newer than what Redis has: write it first.
    const held = this.held.get(token);
    if (held && held.entry !== 'discard') await this.save(token, held.entry);
    let reply: unknown;
    try {
      reply = await this.takeScript([this.key(token)], [ownerOf(owner), this.ttlMs]);
    } catch (error) {
      throw new StoreUnavailableError('redis', error);
    }
    const [status, data] = reply as [number, string | undefined];
    if (status === 1) return { status: 'not_owner' };
    if (status !== 2 || data === undefined) return { status: 'unknown' };
    return { status: 'resumed', entry: JSON.parse(data) as StashEntry };
  }

  async discard(token: string): Promise<void> {
    try {
      await this.discardScript([this.key(token)], []);
      this.held.delete(token);
    } catch {
      this.held.set(token, { entry: 'discard', expiresAt: Date.now() + this.ttlMs });
    }
  }

  async keepAlive(tokens: string[]): Promise<void> {
    if (tokens.length === 0 || !this.redis.ready) return;
    const pipeline = this.redis.client.pipeline();
    for (const token of tokens) pipeline.pexpire(this.key(token), this.ttlMs);
    await pipeline.exec().catch(() => undefined);
  }

  /** Writes what was saved or discarded while Redis was away, unless its window has passed. */
  private async flushHeld(): Promise<void> {
    for (const [token, { entry, expiresAt }] of [...this.held]) {
      if (expiresAt <= Date.now()) {
        this.held.delete(token);
        continue;
      }
      if (entry === 'discard') await this.discard(token);
      else await this.save(token, entry);
    }
  }

  private key(token: string): string {
    return this.redis.key(`resume:${token}`);
  }
}

/** Account names and session ids never contain a newline (their patterns exclude it). */
function ownerOf(owner: StashOwner): string {
  return `${owner.account}\n${owner.sessionId}`;
}

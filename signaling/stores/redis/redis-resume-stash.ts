import { randomBytes } from 'node:crypto';
import type { ResumeStash, StashOwner, TakeResult } from '../../../session/resume/resume-stash.ts';
import type { StashEntry } from '../../../session/resume/snapshot.ts';
import { StoreUnavailableError } from '../unavailable.ts';
import { entryJson } from './entry-json.ts';
import type { RedisConnection } from './redis-connection.ts';

// One hash per token: state 'open' (owner + data), or 'taken' (a tombstone for the resume window
// that keeps owner and data, and the nonce of the take, so an unanswered take can be undone).
const SAVE = `
if redis.call('HGET', KEYS[1], 'state') == 'taken' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'open', 'owner', ARGV[1], 'data', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

// Atomic single use: of two processes taking one token at the same moment, exactly one gets it.
// The same take run again (a client-library retry after a reconnect) gets the same answer.
const TAKE = `
local v = redis.call('HMGET', KEYS[1], 'state', 'owner', 'data', 'taker')
if v[1] == 'taken' and v[4] == ARGV[3] then return {2, v[3]} end
if v[1] ~= 'open' then return {0} end
if v[2] ~= ARGV[1] then return {1} end
redis.call('HSET', KEYS[1], 'state', 'taken', 'taker', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {2, v[3]}`;

// Undoes the take with this nonce, if that take happened (its answer never arrived).
const UNTAKE = `
if redis.call('HGET', KEYS[1], 'taker') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'open')
redis.call('HDEL', KEYS[1], 'taker')
return 1`;

const GIVE_BACK = `
redis.call('HSET', KEYS[1], 'state', 'open', 'owner', ARGV[1], 'data', ARGV[2])
redis.call('HDEL', KEYS[1], 'taker')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

const DISCARD = `
if redis.call('HGET', KEYS[1], 'state') ~= 'taken' then redis.call('DEL', KEYS[1]) end
return 1`;

/** What waits for Redis; a save holds its JSON, taken when it was made. */
type Held = { kind: 'save'; owner: string; json: string; expiresAt: number } | { kind: 'discard'; expiresAt: number };

type PendingSave = { token: string; owner: string; json: string; resolve(result: 'saved' | 'taken'): void };

/**
 * The resume stash in Redis, shared by every process: a client dropped from one process resumes
 * on any other. Saves (a write-through at every turn end of every session) made in one turn of
 * the event loop go to Redis as one pipeline at its end (setImmediate): no delay is added, and
 * the busier the process, the more saves share one socket write, which was most of their cost. What cannot reach Redis is held here and written
 * when it answers again: saves (a later take still sees them, within their window), discards,
 * and the undoing of a take whose answer was lost (a timeout is no proof it did not happen).
 * Takes need Redis and fail with StoreUnavailableError meanwhile, so a client retries rather
 * than losing its conversation.
 */
export class RedisResumeStash implements ResumeStash {
  readonly shared = true;
  private readonly held = new Map<string, Held>();
  /** Takes whose answer never came, by token: undone when Redis answers. */
  private readonly untakes = new Map<string, { nonce: string; expiresAt: number }>();
  private readonly scripts;
  private batch: PendingSave[] = [];
  private batchTimer: NodeJS.Immediate | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly ttlMs: number,
  ) {
    this.scripts = {
      save: redis.script('parleyStashSave', SAVE),
      take: redis.script('parleyStashTake', TAKE),
      untake: redis.script('parleyStashUntake', UNTAKE),
      giveBack: redis.script('parleyStashGiveBack', GIVE_BACK),
      discard: redis.script('parleyStashDiscard', DISCARD),
    };
    redis.onRecovered(() => void this.flushHeld());
  }

  /** Serializes the entry before it returns: the caller may pass a session's live objects. */
  save(token: string, entry: StashEntry): Promise<'saved' | 'taken'> {
    const [owner, json] = [ownerOf(entry), entryJson(entry)];
    return new Promise((resolve) => {
      this.batch.push({ token, owner, json, resolve });
      this.batchTimer ??= setImmediate(() => void this.flushBatch());
    });
  }

  /** Sends the gathered saves; those Redis did not answer are held for its return. */
  private async flushBatch(): Promise<void> {
    clearImmediate(this.batchTimer);
    this.batchTimer = undefined;
    const batch = this.batch;
    this.batch = [];
    if (batch.length === 0) return;
    const calls = batch.map((p) => ({ keys: [this.key(p.token)], args: [p.owner, p.json, this.ttlMs] }));
    // Alone in its turn of the event loop (a quiet process), a save skips the pipeline's own cost.
    const replies: Array<[Error | null, unknown]> =
      calls.length === 1
        ? await this.scripts.save(calls[0]!.keys, calls[0]!.args).then((v): Array<[Error | null, unknown]> => [[null, v]], (e: Error) => [[e, undefined]])
        : await this.scripts.save.many(calls).catch(() => []);
    for (const [i, pending] of batch.entries()) {
      const [error, saved] = replies[i] ?? [new Error('not sent'), undefined];
      if (error) {
        this.held.set(pending.token, { kind: 'save', owner: pending.owner, json: pending.json, expiresAt: Date.now() + this.ttlMs });
        pending.resolve('saved');
      } else {
        if (this.held.get(pending.token)?.kind === 'save') this.held.delete(pending.token);
        pending.resolve(saved === 1 ? 'saved' : 'taken');
      }
    }
  }

  /** A take, discard or give-back of a token must come after its gathered saves. */
  private async flushFor(token: string): Promise<void> {
    if (this.batch.some((p) => p.token === token)) await this.flushBatch();
  }

  private async saveJson(token: string, owner: string, json: string): Promise<'saved' | 'taken'> {
    try {
      const saved = await this.scripts.save([this.key(token)], [owner, json, this.ttlMs]);
      this.held.delete(token);
      return saved === 1 ? 'saved' : 'taken';
    } catch {
      this.held.set(token, { kind: 'save', owner, json, expiresAt: Date.now() + this.ttlMs });
      return 'saved';
    }
  }

  async take(token: string, owner: StashOwner): Promise<TakeResult> {
    // What this process still holds for the token is newer than what Redis has: written first.
    await this.flushFor(token);
    const held = this.held.get(token);
    if (held?.kind === 'save') await this.saveJson(token, held.owner, held.json);
    const nonce = randomBytes(12).toString('base64url');
    let reply: unknown;
    try {
      reply = await this.scripts.take([this.key(token)], [ownerOf(owner), this.ttlMs, nonce]);
    } catch (error) {
      this.untakes.set(token, { nonce, expiresAt: Date.now() + this.ttlMs });
      void this.untake(token, nonce);
      throw new StoreUnavailableError('redis', error);
    }
    const [status, data] = reply as [number, string | undefined];
    if (status === 1) return { status: 'not_owner' };
    if (status !== 2 || data === undefined) return { status: 'unknown' };
    return { status: 'resumed', entry: JSON.parse(data) as StashEntry };
  }

  async giveBack(token: string, entry: StashEntry): Promise<void> {
    await this.flushFor(token);
    const [owner, json] = [ownerOf(entry), entryJson(entry)];
    try {
      await this.scripts.giveBack([this.key(token)], [owner, json, this.ttlMs]);
    } catch {
      // Redis answered the take a moment ago: hold the entry, it is written as soon as it answers.
      this.held.set(token, { kind: 'save', owner, json, expiresAt: Date.now() + this.ttlMs });
    }
  }

  async discard(token: string): Promise<void> {
    await this.flushFor(token);
    try {
      await this.scripts.discard([this.key(token)], []);
      this.held.delete(token);
    } catch {
      this.held.set(token, { kind: 'discard', expiresAt: Date.now() + this.ttlMs });
    }
  }

  async keepAlive(tokens: string[]): Promise<void> {
    if (tokens.length === 0 || !this.redis.ready) return;
    const pipeline = this.redis.client.pipeline();
    for (const token of tokens) pipeline.pexpire(this.key(token), this.ttlMs);
    await pipeline.exec().catch(() => undefined);
  }

  private async untake(token: string, nonce: string): Promise<void> {
    try {
      await this.scripts.untake([this.key(token)], [nonce]);
      if (this.untakes.get(token)?.nonce === nonce) this.untakes.delete(token);
    } catch {
      // Still held: tried again when Redis answers.
    }
  }

  /** Writes what was held while Redis was away, unless its window has passed: undone takes first. */
  private async flushHeld(): Promise<void> {
    const now = Date.now();
    for (const [token, { nonce, expiresAt }] of [...this.untakes]) {
      if (expiresAt <= now) this.untakes.delete(token);
      else await this.untake(token, nonce);
    }
    for (const [token, held] of [...this.held]) {
      if (held.expiresAt <= now) this.held.delete(token);
      else if (held.kind === 'save') await this.saveJson(token, held.owner, held.json);
      else await this.discard(token);
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

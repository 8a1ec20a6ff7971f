import { randomBytes } from 'node:crypto';
import type { ChatMessage } from '../../../session/providers/llm.ts';
import type { ResumeStash, StashOwner, TakeResult } from '../../../session/resume/resume-stash.ts';
import type { StashEntry } from '../../../session/resume/snapshot.ts';
import { StoreUnavailableError } from '../unavailable.ts';
import { entryFromParts, entryHead, messageJson, type EntryHead } from './entry-json.ts';
import { HistorySync } from './history-sync.ts';
import type { RedisConnection } from './redis-connection.ts';
import { DISCARD, GIVE_BACK, SAVE, TAKE, UNTAKE } from './stash-scripts.ts';

/** What waits for Redis; a save holds its parts as they were when it was made (messages never change). */
type Held = { kind: 'save'; owner: string; head: EntryHead; expiresAt: number } | { kind: 'discard'; expiresAt: number };

type PendingSave = { token: string; owner: string; head: EntryHead; args: Array<string | number>; resolve(result: 'saved' | 'taken'): void };

/**
 * The resume stash in Redis, shared by every process: a client dropped from one process resumes
 * on any other. A conversation is written through at every turn end, so a save sends only what
 * changed since this process's last write for the token (history-sync.ts), and serializes only
 * the messages it sends. Saves made in one turn of the event loop go to Redis in one script call
 * at its end (setImmediate): no delay is added, and the busier the process, the more saves share
 * one call. (A longer window, 5 to 50 ms, was measured and saved no CPU, and it is turns a crash
 * loses: bench/results-scale.md.) What cannot reach Redis is held here and written in full when
 * it answers again: saves (a later take still sees them, within their window), discards, and the
 * undoing of a take whose answer was lost (a timeout is no proof it did not happen). Takes need
 * Redis and fail with StoreUnavailableError meanwhile, so a client retries rather than losing
 * its conversation.
 */
export class RedisResumeStash implements ResumeStash {
  readonly shared = true;
  private readonly held = new Map<string, Held>();
  /** Takes whose answer never came, by token: undone when Redis answers. */
  private readonly untakes = new Map<string, { nonce: string; expiresAt: number }>();
  private readonly sync = new HistorySync<ChatMessage>(messageJson);
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

  /** Serializes what changed before it returns: the caller may pass a session's live objects. */
  save(token: string, entry: StashEntry): Promise<'saved' | 'taken'> {
    const [owner, head] = [ownerOf(entry), entryHead(entry)];
    const write = this.sync.plan(token, head.history, head.settings);
    const args = [write.tail.length, owner, head.meta, write.settings, write.expect, write.mark, write.keep, ...write.tail];
    return new Promise((resolve) => {
      this.batch.push({ token, owner, head, args, resolve });
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
    // One script call for the whole batch: one command to encode, one reply to read.
    const [keys, args]: [string[], Array<string | number>] = [[], [this.ttlMs]];
    for (const p of batch) {
      keys.push(...this.keys(p.token));
      for (const arg of p.args) args.push(arg);
    }
    const replies = await this.scripts.save(keys, args).then(
      (r) => r as number[],
      () => [],
    );
    for (const [i, pending] of batch.entries()) {
      const reply = replies[i];
      if (reply === undefined) {
        this.sync.forget(pending.token);
        this.held.set(pending.token, { kind: 'save', owner: pending.owner, head: pending.head, expiresAt: Date.now() + this.ttlMs });
        pending.resolve('saved');
      } else if (reply === 2) {
        // Redis does not hold the write this one built on (lost, expired, Redis restarted).
        this.sync.forget(pending.token);
        pending.resolve(await this.saveFull(pending.token, pending.owner, pending.head));
      } else {
        if (this.held.get(pending.token)?.kind === 'save') this.held.delete(pending.token);
        if (reply !== 1) this.sync.forget(pending.token);
        pending.resolve(reply === 1 ? 'saved' : 'taken');
      }
    }
  }

  /** A take, discard or give-back of a token must come after its gathered saves. */
  private async flushFor(token: string): Promise<void> {
    if (this.batch.some((p) => p.token === token)) await this.flushBatch();
  }

  private async saveFull(token: string, owner: string, head: EntryHead): Promise<'saved' | 'taken'> {
    this.sync.forget(token);
    const write = this.sync.plan(token, head.history, head.settings);
    try {
      const [saved] = (await this.scripts.save(this.keys(token), [this.ttlMs, write.tail.length, owner, head.meta, write.settings, '', write.mark, 0, ...write.tail])) as number[];
      this.held.delete(token);
      if (saved !== 1) this.sync.forget(token);
      return saved === 1 ? 'saved' : 'taken';
    } catch {
      this.sync.forget(token);
      this.held.set(token, { kind: 'save', owner, head, expiresAt: Date.now() + this.ttlMs });
      return 'saved';
    }
  }

  async take(token: string, owner: StashOwner): Promise<TakeResult> {
    // What this process still holds for the token is newer than what Redis has: written first.
    await this.flushFor(token);
    const held = this.held.get(token);
    if (held?.kind === 'save') await this.saveFull(token, held.owner, held.head);
    const nonce = randomBytes(12).toString('base64url');
    let reply: unknown;
    try {
      reply = await this.scripts.take(this.keys(token), [ownerOf(owner), this.ttlMs, nonce]);
    } catch (error) {
      this.untakes.set(token, { nonce, expiresAt: Date.now() + this.ttlMs });
      void this.untake(token, nonce);
      throw new StoreUnavailableError('redis', error);
    }
    const [status, data, history, settings] = reply as [number, string | undefined, string[] | undefined, string | undefined];
    if (status === 1) return { status: 'not_owner' };
    if (data === undefined || (status !== 2 && status !== 3)) return { status: 'unknown' };
    this.sync.forget(token);
    return { status: 'resumed', entry: status === 3 ? (JSON.parse(data) as StashEntry) : entryFromParts({ meta: data, settings: settings ?? '{}', history: history ?? [] }) };
  }

  async giveBack(token: string, entry: StashEntry): Promise<void> {
    await this.flushFor(token);
    const [owner, head] = [ownerOf(entry), entryHead(entry)];
    try {
      await this.scripts.giveBack(this.keys(token), [this.ttlMs, owner, head.meta, head.settings, ...head.history.map(messageJson)]);
    } catch {
      // Redis answered the take a moment ago: hold the entry, it is written as soon as it answers.
      this.held.set(token, { kind: 'save', owner, head, expiresAt: Date.now() + this.ttlMs });
    }
  }

  async discard(token: string): Promise<void> {
    await this.flushFor(token);
    this.sync.forget(token);
    try {
      await this.scripts.discard(this.keys(token), []);
      this.held.delete(token);
    } catch {
      this.held.set(token, { kind: 'discard', expiresAt: Date.now() + this.ttlMs });
    }
  }

  async keepAlive(tokens: string[]): Promise<void> {
    if (tokens.length === 0 || !this.redis.ready) return;
    const pipeline = this.redis.client.pipeline();
    for (const token of tokens) for (const key of this.keys(token)) pipeline.pexpire(key, this.ttlMs);
    await pipeline.exec().catch(() => undefined);
  }

  private async untake(token: string, nonce: string): Promise<void> {
    try {
      await this.scripts.untake(this.keys(token), [nonce]);
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
      else if (held.kind === 'save') await this.saveFull(token, held.owner, held.head);
      else await this.discard(token);
    }
  }

  /** The token's hash and its history list ('resume-h:' never equals 'resume:' + any token). */
  private keys(token: string): [string, string] {
    return [this.redis.key(`resume:${token}`), this.redis.key(`resume-h:${token}`)];
  }
}

/** Account names and session ids never contain a newline (their patterns exclude it). */
function ownerOf(owner: StashOwner): string {
  return `${owner.account}\n${owner.sessionId}`;
}

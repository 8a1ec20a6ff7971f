import { afterAll, describe, expect, it } from 'vitest';
import { MemoryResumeStash, type ResumeStash } from '../../session/resume/resume-stash.ts';
import type { StashEntry } from '../../session/resume/snapshot.ts';
import { eventually } from '../testing/conversation.ts';
import { stateEngines } from '../testing/state-engines.ts';
import type { RedisConnection } from './redis/redis-connection.ts';
import { RedisResumeStash } from './redis/redis-resume-stash.ts';
import { StoreUnavailableError } from './unavailable.ts';

const owner = { account: 'acme', sessionId: 'call-1' };

function entry(text: string, who = owner): StashEntry {
  return {
    ...who,
    snapshot: {
      settings: { modality: 'text' } as StashEntry['snapshot']['settings'],
      history: [{ role: 'user', content: text }],
      injectedIds: ['m1'],
      pendingCalls: [{ request: { id: 'c1', name: 'lookup', args: { q: text } }, job: undefined, deferrable: true }],
      bargeSeq: 2,
      greeted: true,
    },
  };
}

let tokens = 0;
const token = () => `rt_test_${(tokens += 1)}`;

/** The ResumeStash contract, in memory and on a real Redis: single use, owners, tombstones, expiry. */
describe.each(stateEngines())('ResumeStash on $name', (engine) => {
  afterAll(() => engine.cleanup());
  const make = (connection: RedisConnection | undefined, ttlMs: number): ResumeStash =>
    connection ? new RedisResumeStash(connection, ttlMs) : new MemoryResumeStash(ttlMs);
  const open = async (ttlMs = 60_000) => make(await engine.connection(), ttlMs);

  it('says whether it is shared with other processes', async () => {
    expect((await open()).shared).toBe(engine.name === 'redis');
  });

  it('a saved entry is taken once, whole; the second take finds nothing', async () => {
    const stash = await open();
    const t = token();
    expect(await stash.save(t, entry('first'))).toBe('saved');
    expect(await stash.save(t, entry('latest'))).toBe('saved');
    expect(await stash.take(t, owner)).toEqual({ status: 'resumed', entry: entry('latest') });
    expect(await stash.take(t, owner)).toEqual({ status: 'unknown' });
    expect(await stash.take(token(), owner)).toEqual({ status: 'unknown' });
  });

  it('another account or session id is refused and the entry stays for its owner', async () => {
    const stash = await open();
    const t = token();
    await stash.save(t, entry('mine'));
    expect(await stash.take(t, { account: 'globex', sessionId: 'call-1' })).toEqual({ status: 'not_owner' });
    expect(await stash.take(t, { account: 'acme', sessionId: 'call-2' })).toEqual({ status: 'not_owner' });
    expect((await stash.take(t, owner)).status).toBe('resumed');
  });

  it('a taken token stays taken: a late save from the old holder cannot bring it back', async () => {
    const stash = await open();
    const t = token();
    await stash.save(t, entry('one'));
    await stash.take(t, owner);
    expect(await stash.save(t, entry('late write-through'))).toBe('taken');
    expect(await stash.take(t, owner)).toEqual({ status: 'unknown' });
    await stash.discard(t);
    expect(await stash.save(t, entry('after discard'))).toBe('taken');
  });

  it('an entry given back after a take (the start did not go through) can be taken again', async () => {
    const stash = await open();
    const t = token();
    await stash.save(t, entry('kept'));
    const taken = await stash.take(t, owner);
    expect(taken.status).toBe('resumed');
    await stash.giveBack(t, entry('kept'));
    expect(await stash.take(t, owner)).toEqual({ status: 'resumed', entry: entry('kept') });
  });

  it('discard ends a conversation cleanly: its token is unknown afterwards', async () => {
    const stash = await open();
    const t = token();
    await stash.save(t, entry('bye'));
    await stash.discard(t);
    expect(await stash.take(t, owner)).toEqual({ status: 'unknown' });
  });

  it('entries expire with the resume window; keepAlive starts the window again', async () => {
    // A 1 s window kept alive every 100 ms for 1.6 s: only a stall of 900 ms between two
    // keep-alives (a busy machine) could lose the kept entry.
    const stash = await open(1000);
    const [kept, dropped] = [token(), token()];
    await stash.save(kept, entry('kept'));
    await stash.save(dropped, entry('dropped'));
    const keepUntil = Date.now() + 1600;
    while (Date.now() < keepUntil) {
      await stash.keepAlive([kept]);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await stash.take(dropped, owner)).toEqual({ status: 'unknown' });
    expect((await stash.take(kept, owner)).status).toBe('resumed');
  });

  it('two processes taking one token at the same moment: exactly one resumes, 100 times out of 100', async () => {
    const first = await engine.connection();
    const [a, b] = [make(first, 60_000), make(first ? await engine.connection(first) : undefined, 60_000)];
    // In memory both "processes" must share the map, so they are the same stash.
    const other = engine.name === 'memory' ? a : b;
    const outcomes: string[] = [];
    for (let i = 0; i < 100; i += 1) {
      const t = token();
      await a.save(t, entry(`race ${i}`));
      const results = await Promise.all([a.take(t, owner), other.take(t, owner)]);
      outcomes.push(results.map((r) => r.status).sort().join('+'));
    }
    expect(new Set(outcomes)).toEqual(new Set(['resumed+unknown']));
  });
});

describe.skipIf(!stateEngines().some((e) => e.name === 'redis'))('ResumeStash on redis while Redis is down', () => {
  const redisEngine = stateEngines().find((e) => e.name === 'redis')!;
  afterAll(() => redisEngine.cleanup());

  it('saves are held and written when Redis is back; takes fail as unavailable meanwhile, never as unknown', async () => {
    const connection = (await redisEngine.connection())!;
    const stash = new RedisResumeStash(connection, 60_000);
    const server = await redisEngine.server();
    const [during, gone] = [token(), token()];

    await server.stop(true);
    await eventually(() => !connection.ready, 5000, 'the client to notice');
    expect(await stash.save(during, entry('during'))).toBe('saved');
    await stash.save(gone, entry('ended cleanly'));
    await stash.discard(gone);
    await expect(stash.take(during, owner)).rejects.toBeInstanceOf(StoreUnavailableError);

    await server.start();
    await eventually(() => connection.ready, 10_000, 'the client to reconnect');
    expect(await stash.take(during, owner)).toEqual({ status: 'resumed', entry: entry('during') });
    expect(await stash.take(gone, owner)).toEqual({ status: 'unknown' });
  }, 30_000);

  it('a take whose answer never came (Redis hung past the timeout) is undone: the token still works', async () => {
    const connection = (await redisEngine.connection(undefined, 300))!;
    const stash = new RedisResumeStash(connection, 60_000);
    const server = await redisEngine.server();
    const t = token();
    await stash.save(t, entry('in doubt'));
    server.freeze();
    try {
      // Redis runs the take when it wakes up, after the client gave up on it.
      await expect(stash.take(t, owner)).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      server.thaw();
    }
    await eventually(async () => (await stash.take(t, owner)).status === 'resumed', 5000, 'the token to work again');
  }, 30_000);
});

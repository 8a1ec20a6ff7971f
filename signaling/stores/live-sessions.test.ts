import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../testing/conversation.ts';
import { stateEngines } from '../testing/state-engines.ts';
import { MemoryLiveSessions, type LiveSession, type LiveSessionStore } from './live-sessions.ts';
import type { RedisConnection } from './redis/redis-connection.ts';
import { RedisLiveSessions } from './redis/redis-live-sessions.ts';

let n = 0;
function session(store: LiveSessionStore, account: string, extra: Partial<LiveSession> = {}): LiveSession {
  n += 1;
  return { id: `${store.instance}/${n}`, sessionId: `call-${n}`, account, instance: store.instance, startedAt: new Date(Date.now() + n).toISOString(), modality: 'text', transport: 'websocket', ...extra };
}

const make = (connection: RedisConnection | undefined, instance: string, leaseMs = 15_000): LiveSessionStore =>
  connection ? new RedisLiveSessions(connection, instance, leaseMs) : new MemoryLiveSessions(instance);

/** The live-session registry contract, in memory and on a real Redis. */
describe.each(stateEngines())('LiveSessionStore on $name', (engine) => {
  const stores: LiveSessionStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await engine.cleanup();
  });
  const open = async (instance = 'host:1:aa', leaseMs?: number) => {
    const store = make(await engine.connection(), instance, leaseMs);
    stores.push(store);
    return store;
  };

  it('lists, counts per account and releases', async () => {
    const store = await open();
    const [a1, a2, b1] = [session(store, 'acme'), session(store, 'acme', { modality: 'voice', transport: 'webrtc' }), session(store, 'beta')];
    for (const s of [a1, a2, b1]) expect(await store.acquire(s, 0)).toBe('acquired');
    expect(await store.list()).toEqual([a1, a2, b1]);
    expect(await store.list('acme')).toEqual([a1, a2]);
    expect(await store.countForAccount('acme')).toBe(2);
    await store.release(a1.id);
    expect(await store.countForAccount('acme')).toBe(1);
    expect(await store.list()).toEqual([a2, b1]);
    await store.release(a1.id);
    expect(await store.countForAccount('nobody')).toBe(0);
  });

  it('holds a per-account limit: past it, over_limit; a release makes room', async () => {
    const store = await open();
    const [s1, s2, s3] = [session(store, 'capped'), session(store, 'capped'), session(store, 'capped')];
    expect(await store.acquire(s1, 2)).toBe('acquired');
    expect(await store.acquire(s2, 2)).toBe('acquired');
    expect(await store.acquire(s3, 2)).toBe('over_limit');
    expect(await store.acquire(session(store, 'other'), 2)).toBe('acquired');
    await store.release(s1.id);
    expect(await store.acquire(s3, 2)).toBe('acquired');
    expect(await store.countForAccount('capped')).toBe(2);
  });
});

describe.skipIf(!stateEngines().some((e) => e.name === 'redis'))('LiveSessionStore on redis: across processes', () => {
  const engine = stateEngines().find((e) => e.name === 'redis')!;
  afterAll(() => engine.cleanup());

  it('a limit of 5 raced by two processes with 8 starts each: exactly 5 acquired, both count 5', async () => {
    const first = (await engine.connection())!;
    const a = make(first, 'host-a:1:aa');
    const b = make((await engine.connection(first))!, 'host-b:2:bb');
    try {
      const stores = Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? a : b));
      const results = await Promise.all(stores.map((store) => store.acquire(session(store, 'racy'), 5)));
      expect(results.filter((r) => r === 'acquired')).toHaveLength(5);
      expect(await a.countForAccount('racy')).toBe(5);
      expect(await b.countForAccount('racy')).toBe(5);
      // Which process wins how many depends on which connection's commands reach Redis first.
      const winners = new Set(stores.filter((_, i) => results[i] === 'acquired').map((store) => (store === a ? 'host-a:1:aa' : 'host-b:2:bb')));
      expect(new Set((await b.list('racy')).map((s) => s.instance))).toEqual(winners);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a process that dies stops renewing: its sessions leave counts and listings within the lease', async () => {
    const first = (await engine.connection())!;
    const dying = make(first, 'host-a:1:dd', 600);
    const survivor = make((await engine.connection(first))!, 'host-b:2:ee', 600);
    try {
      await dying.acquire(session(dying, 'lease'), 0);
      await survivor.acquire(session(survivor, 'lease'), 0);
      // Longer than the lease: renewals keep both.
      await new Promise((r) => setTimeout(r, 900));
      expect(await survivor.countForAccount('lease')).toBe(2);
      // The dying process's connection goes away without a release (as SIGKILL would leave it).
      await first.close();
      await eventually(async () => (await survivor.countForAccount('lease')) === 1, 3000, 'the dead lease to expire');
      expect((await survivor.list('lease')).map((s) => s.instance)).toEqual(['host-b:2:ee']);
    } finally {
      await survivor.close();
    }
  });

  it('after Redis restarts empty, each process registers its live sessions again', async () => {
    const connection = (await engine.connection())!;
    const store = make(connection, 'host-a:1:ff');
    const server = await engine.server();
    try {
      const live = session(store, 'comeback');
      await store.acquire(live, 0);
      await server.restart();
      await eventually(() => connection.ready, 10_000, 'the client to reconnect');
      await eventually(async () => (await store.countForAccount('comeback').catch(() => 0)) === 1, 5000, 'the session to be registered again');
      expect(await store.list('comeback')).toEqual([live]);
    } finally {
      await store.close();
    }
  }, 30_000);

  it('while Redis is down, sessions are still admitted and counted in this process (the limit holds per process)', async () => {
    const connection = (await engine.connection())!;
    const store = make(connection, 'host-a:1:gg');
    const server = await engine.server();
    try {
      await server.stop(true);
      await eventually(() => !connection.ready, 5000, 'the client to notice');
      expect(await store.acquire(session(store, 'offline'), 1)).toBe('acquired');
      expect(await store.acquire(session(store, 'offline'), 1)).toBe('over_limit');
    } finally {
      await server.start();
      await store.close();
    }
  }, 30_000);
});

import { afterAll, describe, expect, it } from 'vitest';
import { ConversationHistory } from '../../../session/history.ts';
import type { StashEntry } from '../../../session/resume/snapshot.ts';
import { eventually } from '../../testing/conversation.ts';
import { listenToSaveCalls } from '../../testing/redis-save-calls.ts';
import { stateEngines } from '../../testing/state-engines.ts';
import { RedisResumeStash } from './redis-resume-stash.ts';

const engine = stateEngines().find((e) => e.name === 'redis');
let sessions = 0;

/** One conversation of its own: a token, an owner and a history. */
function conversation() {
  const n = (sessions += 1);
  const owner = { account: 'acme', sessionId: `call-${n}` };
  const history = new ConversationHistory(undefined);
  return {
    token: `rt_shared_${n}`,
    owner,
    history,
    entry: (): StashEntry => ({ ...owner, snapshot: { settings: { modality: 'text' } as StashEntry['snapshot']['settings'], history: history.view(), injectedIds: [], pendingCalls: [], closedCalls: [], bargeSeq: 0, greeted: true } }),
    turn(k: number) {
      history.addUser(`question ${k} of ${owner.sessionId}`);
      history.fillAssistant(history.reserve(), `answer ${k}`);
    },
  };
}

/** What a take gives back: the entry as plain data. */
const plain = (e: StashEntry): StashEntry => JSON.parse(JSON.stringify(e)) as StashEntry;
const nextEventLoopTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe.skipIf(!engine)('RedisResumeStash: the saves of an event-loop turn share one Redis call (real redis-server)', () => {
  afterAll(() => engine!.cleanup());

  /** A writing process whose save calls are recorded, and another that takes. */
  const processes = async () => {
    const a = (await engine!.connection())!;
    const b = (await engine!.connection(a))!;
    const { calls } = listenToSaveCalls(a);
    return { a, calls, writer: new RedisResumeStash(a, 60_000), other: new RedisResumeStash(b, 60_000) };
  };
  const keyOf = (a: { key(name: string): string }, c: { token: string }) => a.key(`resume:${c.token}`);

  it('the saves of one event-loop turn share one call, a later turn makes its own; every session resumes whole elsewhere', async () => {
    const { a, calls, writer, other } = await processes();
    const [x, y, z] = [conversation(), conversation(), conversation()];
    for (const c of [x, y, z]) c.turn(1);
    const first = [writer.save(x.token, x.entry()), writer.save(y.token, y.entry())];
    // Nothing is sent before the event-loop turn ends.
    expect(calls).toEqual([]);
    await nextEventLoopTurn();
    const later = writer.save(z.token, z.entry());
    expect(await Promise.all([...first, later])).toEqual(['saved', 'saved', 'saved']);
    expect(calls.map((call) => call.map((e) => e.key))).toEqual([[keyOf(a, x), keyOf(a, y)], [keyOf(a, z)]]);
    for (const c of [x, y, z]) expect(await other.take(c.token, c.owner)).toEqual({ status: 'resumed', entry: plain(c.entry()) });
  });

  it("one session's turns in one call go in order, each building on the one before", async () => {
    const { calls, writer, other } = await processes();
    const x = conversation();
    const saved: Array<Promise<string>> = [];
    for (let k = 1; k <= 3; k += 1) {
      x.turn(k);
      saved.push(writer.save(x.token, x.entry()));
    }
    expect(await Promise.all(saved)).toEqual(['saved', 'saved', 'saved']);
    expect(calls).toHaveLength(1);
    const content = (m: string) => (JSON.parse(m) as { content: string }).content;
    expect(calls[0]!.map((e) => [e.expect === '', e.messages.map(content)])).toEqual([1, 2, 3].map((k) => [k === 1, [`question ${k} of ${x.owner.sessionId}`, `answer ${k}`]]));
    expect(await other.take(x.token, x.owner)).toEqual({ status: 'resumed', entry: plain(x.entry()) });
  });

  it('a take of a token whose save still waits for the end of the event-loop turn sends that save first', async () => {
    const { calls, writer } = await processes();
    const x = conversation();
    x.turn(1);
    const saved = writer.save(x.token, x.entry());
    // The same process takes it back at once (a client reconnecting to it).
    const taken = await writer.take(x.token, x.owner);
    expect(await saved).toBe('saved');
    expect(calls).toHaveLength(1);
    expect(taken).toEqual({ status: 'resumed', entry: plain(x.entry()) });
  });

  it('a shared call that fails (Redis down) holds every save in it; they are written in full when Redis is back, and the next turn builds on them', async () => {
    const { calls, writer, other } = await processes();
    const [x, y] = [conversation(), conversation()];
    for (const c of [x, y]) {
      c.turn(1);
      expect(await writer.save(c.token, c.entry())).toBe('saved');
    }
    const redis = await engine!.server();
    await redis.stop();
    for (const c of [x, y]) c.turn(2);
    // Redis is gone: the saves resolve (the conversation goes on) and are held.
    expect(await Promise.all([writer.save(x.token, x.entry()), writer.save(y.token, y.entry())])).toEqual(['saved', 'saved']);
    const sent = calls.length;
    await redis.start();
    // Redis came back empty: what was held is written in full as soon as it answers.
    await eventually(() => calls.length >= sent + 2, 10_000, 'the held saves to be written');
    expect(calls.slice(sent).flat().map((e) => [e.expect, e.messages.length])).toEqual([['', 4], ['', 4]]);
    x.turn(3);
    expect(await writer.save(x.token, x.entry())).toBe('saved');
    expect(calls.at(-1)!.map((e) => [e.expect !== '', e.messages.length])).toEqual([[true, 2]]);
    for (const c of [x, y]) expect(await other.take(c.token, c.owner)).toEqual({ status: 'resumed', entry: plain(c.entry()) });
  });
});

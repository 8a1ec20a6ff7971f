import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
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
    token: `rt_window_${n}`,
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

describe.skipIf(!engine)('RedisResumeStash shares Redis calls between sessions (real redis-server)', () => {
  afterAll(() => engine!.cleanup());
  afterEach(() => vi.useRealTimers());

  /** A writing process whose save calls are recorded, and another that takes. */
  const processes = async (windowMs: number) => {
    const a = (await engine!.connection())!;
    const b = (await engine!.connection(a))!;
    const { calls } = listenToSaveCalls(a);
    return { a, calls, writer: new RedisResumeStash(a, 60_000, windowMs), other: new RedisResumeStash(b, 60_000) };
  };
  const keyOf = (a: { key(name: string): string }, c: { token: string }) => a.key(`resume:${c.token}`);

  it('without a window: the saves of one event-loop turn share one call, a later turn makes its own', async () => {
    const { a, calls, writer, other } = await processes(0);
    const [x, y, z] = [conversation(), conversation(), conversation()];
    for (const c of [x, y, z]) c.turn(1);
    const first = [writer.save(x.token, x.entry()), writer.save(y.token, y.entry())];
    await nextEventLoopTurn();
    const later = writer.save(z.token, z.entry());
    expect(await Promise.all([...first, later])).toEqual(['saved', 'saved', 'saved']);
    expect(calls.map((call) => call.map((e) => e.key))).toEqual([[keyOf(a, x), keyOf(a, y)], [keyOf(a, z)]]);
    for (const c of [x, y, z]) expect(await other.take(c.token, c.owner)).toEqual({ status: 'resumed', entry: plain(c.entry()) });
  });

  it('with a window: two sessions ending turns in different event-loop turns share one call, and both resume whole elsewhere', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { a, calls, writer, other } = await processes(5);
    const [x, y] = [conversation(), conversation()];
    x.turn(1);
    const saved = [writer.save(x.token, x.entry())];
    await nextEventLoopTurn();
    y.turn(1);
    saved.push(writer.save(y.token, y.entry()));
    await nextEventLoopTurn();
    // Nothing is sent before the window ends.
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(5);
    expect(await Promise.all(saved)).toEqual(['saved', 'saved']);
    expect(calls.map((call) => call.map((e) => e.key))).toEqual([[keyOf(a, x), keyOf(a, y)]]);
    vi.useRealTimers();
    for (const c of [x, y]) expect(await other.take(c.token, c.owner)).toEqual({ status: 'resumed', entry: plain(c.entry()) });
  });

  it('with a window: one session\'s turns within it go in one call, in order, the later building on the earlier', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { calls, writer, other } = await processes(5);
    const x = conversation();
    const saved: Array<Promise<string>> = [];
    for (let k = 1; k <= 3; k += 1) {
      x.turn(k);
      saved.push(writer.save(x.token, x.entry()));
      await nextEventLoopTurn();
    }
    vi.advanceTimersByTime(5);
    expect(await Promise.all(saved)).toEqual(['saved', 'saved', 'saved']);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.map((e) => [e.expect === '', e.messages.map((m) => (JSON.parse(m) as { content: string }).content)])).toEqual([
      [true, [`question 1 of ${x.owner.sessionId}`, 'answer 1']],
      [false, [`question 2 of ${x.owner.sessionId}`, 'answer 2']],
      [false, [`question 3 of ${x.owner.sessionId}`, 'answer 3']],
    ]);
    vi.useRealTimers();
    expect(await other.take(x.token, x.owner)).toEqual({ status: 'resumed', entry: plain(x.entry()) });
  });

  it('with a window: a take of a token whose save still waits sends that save first', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { writer } = await processes(10);
    const x = conversation();
    x.turn(1);
    const saved = writer.save(x.token, x.entry());
    // The same process takes it back (a client reconnecting to it): the window is not waited for.
    const taken = await writer.take(x.token, x.owner);
    expect(await saved).toBe('saved');
    expect(taken).toEqual({ status: 'resumed', entry: plain(x.entry()) });
  });

  it('a shared call that fails (Redis down) holds every save in it; they are written in full when Redis is back, and so is the next turn', async () => {
    const { calls, writer, other } = await processes(5);
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
    // Built on the full write: only the new turn goes.
    expect(calls.at(-1)!.map((e) => [e.expect !== '', e.messages.length])).toEqual([[true, 2]]);
    for (const c of [x, y]) expect(await other.take(c.token, c.owner)).toEqual({ status: 'resumed', entry: plain(c.entry()) });
  });
});

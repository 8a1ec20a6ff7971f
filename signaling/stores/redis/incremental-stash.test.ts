import { afterAll, describe, expect, it } from 'vitest';
import { ConversationHistory } from '../../../session/history.ts';
import type { StashEntry } from '../../../session/resume/snapshot.ts';
import { listenToSaveCalls } from '../../testing/redis-save-calls.ts';
import { stateEngines } from '../../testing/state-engines.ts';
import { RedisResumeStash } from './redis-resume-stash.ts';

const engine = stateEngines().find((e) => e.name === 'redis');
const owner = { account: 'acme', sessionId: 'call-1' };
let tokens = 0;
const token = () => `rt_inc_${(tokens += 1)}`;

function entry(history: ConversationHistory, settings = { modality: 'text', instructions: 'be brief' } as StashEntry['snapshot']['settings']): StashEntry {
  return { ...owner, snapshot: { settings, history: history.view(), injectedIds: [], pendingCalls: [], closedCalls: [], bargeSeq: 0, greeted: true } };
}

/** What a take gives back: the entry as plain data (live message objects are not shared). */
const plain = (e: StashEntry): StashEntry => JSON.parse(JSON.stringify(e)) as StashEntry;

function turn(history: ConversationHistory, n: number, reply = `answer ${n}`): void {
  history.addUser(`question ${n}`);
  history.fillAssistant(history.reserve(), reply);
}

describe.skipIf(!engine)('RedisResumeStash writes only what changed (real redis-server)', () => {
  afterAll(() => engine!.cleanup());
  /** Two processes of one deployment: a writer and another that resumes. */
  const processes = async () => {
    const a = (await engine!.connection())!;
    const b = (await engine!.connection(a))!;
    const saves = listenToSaveCalls(a).entries;
    return { a, saves, writer: new RedisResumeStash(a, 60_000), other: new RedisResumeStash(b, 60_000) };
  };

  it('every turn end sends only the new messages; another process takes the whole conversation', async () => {
    const { saves, writer, other } = await processes();
    const [t, history] = [token(), new ConversationHistory(undefined)];
    for (let n = 1; n <= 5; n += 1) {
      turn(history, n);
      expect(await writer.save(t, entry(history))).toBe('saved');
    }
    expect(saves.map((s) => s.messages.length)).toEqual([2, 2, 2, 2, 2]);
    // The settings go with the first write only: they did not change.
    expect(saves.map((s) => s.settings !== '')).toEqual([true, false, false, false, false]);
    expect(saves[0]!.expect).toBe('');
    expect(saves.slice(1).every((s) => s.expect !== '')).toBe(true);
    expect(await other.take(t, owner)).toEqual({ status: 'resumed', entry: plain(entry(history)) });
  });

  it('settings changed mid-conversation (a new voice) are written with the next turn and resumed', async () => {
    const { saves, writer, other } = await processes();
    const [t, history] = [token(), new ConversationHistory(undefined)];
    const settings = { modality: 'text', voice: 'alloy' } as StashEntry['snapshot']['settings'];
    turn(history, 1);
    await writer.save(t, entry(history, settings));
    settings.voice = 'nova';
    turn(history, 2);
    await writer.save(t, entry(history, settings));
    expect(saves.at(-1)).toMatchObject({ settings: JSON.stringify(settings), messages: history.view().slice(2).map((m) => JSON.stringify(m)) });
    expect(await other.take(t, owner)).toEqual({ status: 'resumed', entry: plain(entry(history, settings)) });
  });

  it('a history trimmed by its budget forces a full rewrite, stored trimmed', async () => {
    const { saves, writer, other } = await processes();
    const [t, history] = [token(), new ConversationHistory(undefined, 1000)];
    const trimmed = () => /left out/.test(history.view()[0]?.content ?? '');
    let n = 0;
    while (!trimmed()) {
      const before = history.view().length;
      turn(history, (n += 1), `answer ${n} `.repeat(20));
      await writer.save(t, entry(history));
      if (!trimmed()) expect(saves.at(-1)!.messages.length).toBe(history.view().length - before);
    }
    expect(n).toBeGreaterThan(2);
    expect(saves.at(-1)).toMatchObject({ expect: '', messages: history.view().map((m) => JSON.stringify(m)) });
    expect(await other.take(t, owner)).toEqual({ status: 'resumed', entry: plain(entry(history)) });
  });

  it('a reply cut short by a barge-in is stored cut, by replacing that message only', async () => {
    const { saves, writer, other } = await processes();
    const [t, history] = [token(), new ConversationHistory(undefined)];
    turn(history, 1);
    history.addUser('question 2');
    const slot = history.reserve();
    history.fillAssistant(slot, 'a long answer that the user interrupted halfway through');
    await writer.save(t, entry(history));
    history.correctAssistant(slot, 'a long answer that');
    await writer.save(t, entry(history));
    expect(saves.at(-1)!.messages).toEqual([JSON.stringify({ role: 'assistant', content: 'a long answer that' })]);
    const taken = await other.take(t, owner);
    expect(taken).toEqual({ status: 'resumed', entry: plain(entry(history)) });
    expect(taken.status === 'resumed' && taken.entry.snapshot.history.map((m) => m.content)).toEqual(['question 1', 'answer 1', 'question 2', 'a long answer that']);
  });

  it('a process killed before its last write: another resumes exactly the last completed turn', async () => {
    const { a, writer, other } = await processes();
    const [t, history] = [token(), new ConversationHistory(undefined)];
    for (let n = 1; n <= 3; n += 1) {
      turn(history, n);
      await writer.save(t, entry(history));
    }
    const completed = plain(entry(history));
    turn(history, 4);
    // The write of turn 4 is queued for the end of this event-loop turn; the process dies first.
    void writer.save(t, entry(history));
    a.client.disconnect();
    expect(await other.take(t, owner)).toEqual({ status: 'resumed', entry: completed });
  });

  it('a token raced by two processes after incremental writes: exactly one resumes, whole, 100 times out of 100', async () => {
    const { a, writer, other } = await processes();
    const third = new RedisResumeStash((await engine!.connection(a))!, 60_000);
    const outcomes = new Set<string>();
    for (let i = 0; i < 100; i += 1) {
      const [t, history] = [token(), new ConversationHistory(undefined)];
      for (let n = 1; n <= 3; n += 1) {
        turn(history, n);
        await writer.save(t, entry(history));
      }
      const results = await Promise.all([other.take(t, owner), third.take(t, owner)]);
      outcomes.add(results.map((r) => r.status).sort().join('+'));
      expect(results.find((r) => r.status === 'resumed')).toEqual({ status: 'resumed', entry: plain(entry(history)) });
    }
    expect(outcomes).toEqual(new Set(['resumed+unknown']));
  });

  it('a write that does not build on what Redis holds (expired, Redis restarted) is refused and made in full', async () => {
    const { a, saves, writer, other } = await processes();
    const [t, history] = [token(), new ConversationHistory(undefined)];
    turn(history, 1);
    await writer.save(t, entry(history));
    // What Redis holds is gone, as after an expiry or a restart without persistence.
    await a.client.del(a.key(`resume:${t}`), a.key(`resume-h:${t}`));
    turn(history, 2);
    expect(await writer.save(t, entry(history))).toBe('saved');
    expect(saves.slice(-2).map((s) => s.expect === '')).toEqual([false, true]);
    expect(await other.take(t, owner)).toEqual({ status: 'resumed', entry: plain(entry(history)) });
  });

  it('both keys live for the resume window, go on a clean end, and stay as a tombstone after a take', async () => {
    const { a, writer, other } = await processes();
    const [t, history] = [token(), new ConversationHistory(undefined)];
    const keys = [a.key(`resume:${t}`), a.key(`resume-h:${t}`)];
    turn(history, 1);
    await writer.save(t, entry(history));
    for (const key of keys) expect(await a.client.pttl(key)).toBeGreaterThan(50_000);
    await writer.discard(t);
    expect(await a.client.exists(...keys)).toBe(0);
    const u = token();
    await writer.save(u, entry(history));
    await other.take(u, owner);
    expect(await writer.save(u, entry(history))).toBe('taken');
  });

  it('an entry stashed by the previous version (the whole entry in one field) is still taken', async () => {
    const { a, other } = await processes();
    const t = token();
    const history = new ConversationHistory(undefined);
    turn(history, 1);
    await a.client.hset(a.key(`resume:${t}`), 'state', 'open', 'owner', `${owner.account}\n${owner.sessionId}`, 'data', JSON.stringify(entry(history)));
    expect(await other.take(t, owner)).toEqual({ status: 'resumed', entry: plain(entry(history)) });
  });
});

import { describe, expect, it } from 'vitest';
import { HistorySync } from './history-sync.ts';

const h = (...ids: string[]) => ids.map((id) => `{"m":"${id}"}`);
const S = '{"voice":"alloy"}';

describe('HistorySync', () => {
  it('writes a token in full first, then only the messages appended since', () => {
    const sync = new HistorySync<string>((m) => m);
    const first = sync.plan('t', h('a', 'b'), S);
    expect(first).toMatchObject({ expect: '', keep: 0, tail: h('a', 'b') });
    const second = sync.plan('t', h('a', 'b', 'c', 'd'), S);
    expect(second).toMatchObject({ expect: first.mark, keep: 2, tail: h('c', 'd') });
    // Nothing new (a checkpoint after a turn that added nothing): the list is left as it is.
    expect(sync.plan('t', h('a', 'b', 'c', 'd'), S)).toMatchObject({ expect: second.mark, keep: 4, tail: [] });
  });

  it('the history budget dropping the oldest messages (a new note at the front) is a full rewrite', () => {
    const sync = new HistorySync<string>((m) => m);
    sync.plan('t', h('a', 'b', 'c', 'd'), S);
    expect(sync.plan('t', h('note: 2 left out', 'c', 'd', 'e'), S)).toMatchObject({ expect: '', keep: 0, tail: h('note: 2 left out', 'c', 'd', 'e') });
  });

  it('a barge-in truncating the last reply replaces that message only', () => {
    const sync = new HistorySync<string>((m) => m);
    sync.plan('t', h('a', 'reply in full'), S);
    expect(sync.plan('t', h('a', 'reply cut'), S)).toMatchObject({ keep: 1, tail: h('reply cut') });
  });

  it('a history changed otherwise (a message removed from the middle, a reset) is written in full', () => {
    const sync = new HistorySync<string>((m) => m);
    sync.plan('t', h('a', 'b', 'c'), S);
    expect(sync.plan('t', h('x', 'b', 'c'), S)).toMatchObject({ expect: '', keep: 0, tail: h('x', 'b', 'c') });
    expect(sync.plan('t', [], S)).toMatchObject({ expect: '', tail: [] });
  });

  it('sends the settings with a full write and when they changed, not with every turn', () => {
    const sync = new HistorySync<string>((m) => m);
    expect(sync.plan('t', h('a'), S).settings).toBe(S);
    expect(sync.plan('t', h('a', 'b'), S).settings).toBe('');
    expect(sync.plan('t', h('a', 'b', 'c'), '{"voice":"nova"}').settings).toBe('{"voice":"nova"}');
    expect(sync.plan('t', h('x'), '{"voice":"nova"}').settings).toBe('{"voice":"nova"}');
  });

  it('marks are unique per write, and a forgotten token starts again with a full write', () => {
    const [a, b] = [new HistorySync<string>((m) => m), new HistorySync<string>((m) => m)];
    const marks = new Set([a.plan('t', h('a'), S).mark, a.plan('t', h('a', 'b'), S).mark, b.plan('t', h('a'), S).mark]);
    expect(marks.size).toBe(3);
    a.forget('t');
    expect(a.plan('t', h('a', 'b', 'c'), S)).toMatchObject({ expect: '', tail: h('a', 'b', 'c') });
  });

  it('compares messages by identity and serializes only those it sends', () => {
    const serialized: string[] = [];
    const sync = new HistorySync<{ text: string }>((m) => (serialized.push(m.text), JSON.stringify(m)));
    const [a, b, c] = [{ text: 'a' }, { text: 'b' }, { text: 'c' }];
    sync.plan('t', [a, b], S);
    expect(sync.plan('t', [a, b, c], S)).toMatchObject({ keep: 2, tail: [JSON.stringify(c)] });
    // An equal but new object (a corrected reply is a new message) is sent again.
    expect(sync.plan('t', [a, b, { text: 'c' }], S)).toMatchObject({ keep: 2, tail: [JSON.stringify(c)] });
    expect(serialized).toEqual(['a', 'b', 'c', 'c']);
  });
});

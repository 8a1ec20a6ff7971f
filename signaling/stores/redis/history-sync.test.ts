import { describe, expect, it } from 'vitest';
import { HistorySync } from './history-sync.ts';

const h = (...ids: string[]) => ids.map((id) => `{"m":"${id}"}`);

describe('HistorySync', () => {
  it('writes a token in full first, then only the messages appended since', () => {
    const sync = new HistorySync();
    const first = sync.plan('t', h('a', 'b'));
    expect(first).toMatchObject({ expect: '', keep: 0, tail: h('a', 'b') });
    const second = sync.plan('t', h('a', 'b', 'c', 'd'));
    expect(second).toMatchObject({ expect: first.mark, keep: 2, tail: h('c', 'd') });
    // Nothing new (a checkpoint after a turn that added nothing): the list is left as it is.
    expect(sync.plan('t', h('a', 'b', 'c', 'd'))).toMatchObject({ expect: second.mark, keep: 4, tail: [] });
  });

  it('the history budget dropping the oldest messages (a new note at the front) is a full rewrite', () => {
    const sync = new HistorySync();
    sync.plan('t', h('a', 'b', 'c', 'd'));
    expect(sync.plan('t', h('note: 2 left out', 'c', 'd', 'e'))).toMatchObject({ expect: '', keep: 0, tail: h('note: 2 left out', 'c', 'd', 'e') });
  });

  it('a barge-in truncating the last reply replaces that message only', () => {
    const sync = new HistorySync();
    sync.plan('t', h('a', 'reply in full'));
    expect(sync.plan('t', h('a', 'reply cut'))).toMatchObject({ keep: 1, tail: h('reply cut') });
  });

  it('a history changed otherwise (a message removed from the middle, a reset) is written in full', () => {
    const sync = new HistorySync();
    sync.plan('t', h('a', 'b', 'c'));
    expect(sync.plan('t', h('x', 'b', 'c'))).toMatchObject({ expect: '', keep: 0, tail: h('x', 'b', 'c') });
    expect(sync.plan('t', [])).toMatchObject({ expect: '', tail: [] });
  });

  it('marks are unique per write, and a forgotten token starts again with a full write', () => {
    const [a, b] = [new HistorySync(), new HistorySync()];
    const marks = new Set([a.plan('t', h('a')).mark, a.plan('t', h('a', 'b')).mark, b.plan('t', h('a')).mark]);
    expect(marks.size).toBe(3);
    a.forget('t');
    expect(a.plan('t', h('a', 'b', 'c'))).toMatchObject({ expect: '', tail: h('a', 'b', 'c') });
  });
});

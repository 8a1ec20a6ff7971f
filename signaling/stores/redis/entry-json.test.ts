import { describe, expect, it } from 'vitest';
import type { StashEntry } from '../../../session/resume/snapshot.ts';
import { entryJson } from './entry-json.ts';

const entry = (history: StashEntry['snapshot']['history'], instructions = 'be brief'): StashEntry => ({
  account: 'acme',
  sessionId: 'call-1',
  snapshot: {
    settings: { modality: 'text', instructions, tools: [{ name: 'history', parameters: { type: 'object', properties: { history: { type: 'number' } } } }] } as unknown as StashEntry['snapshot']['settings'],
    history,
    injectedIds: ['m1'],
    pendingCalls: [{ request: { id: 'c1', name: 'lookup', args: { q: '$& "history":0 $1' } }, job: undefined, deferrable: false }],
    bargeSeq: 3,
    greeted: true,
  },
});

describe('entryJson', () => {
  it('is exactly JSON.stringify, whatever the content (quotes, $ patterns, a tool named history)', () => {
    const history = [
      { role: 'user' as const, content: 'say "history": [1] and $& or $1 \u2028 ✓' },
      { role: 'assistant' as const, content: '', tool_calls: [{ id: 'c1', name: 'lookup', args: { q: 'x' } }] },
      { role: 'tool' as const, tool_call_id: 'c1', content: '{"ok":true}' },
    ];
    for (const e of [entry(history), entry([]), entry(history, '"history-abc"')]) expect(entryJson(e)).toBe(JSON.stringify(e));
  });

  it('reuses a message\'s JSON while it is the same object, and sees a replaced message', () => {
    const first = { role: 'user' as const, content: 'one' };
    const second = { role: 'assistant' as const, content: 'two' };
    expect(JSON.parse(entryJson(entry([first, second]))).snapshot.history).toEqual([first, second]);
    const corrected = { role: 'assistant' as const, content: 'tw' };
    expect(JSON.parse(entryJson(entry([first, corrected]))).snapshot.history).toEqual([first, corrected]);
  });
});

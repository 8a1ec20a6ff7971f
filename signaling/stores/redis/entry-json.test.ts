import { describe, expect, it, vi } from 'vitest';
import type { StashEntry } from '../../../session/resume/snapshot.ts';
import { entryFromParts, entryHead, messageJson, type EntryParts } from './entry-json.ts';

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

/** The parts a full write sends. */
function entryParts(e: StashEntry): EntryParts {
  const head = entryHead(e);
  return { ...head, history: head.history.map(messageJson) };
}

describe('entry JSON', () => {
  it('round-trips any entry (quotes, $ patterns, a tool named history, an empty history)', () => {
    const history = [
      { role: 'user' as const, content: 'say "history": [1] and $& or $1 \u2028 ✓' },
      { role: 'assistant' as const, content: '', tool_calls: [{ id: 'c1', name: 'lookup', args: { q: 'x' } }] },
      { role: 'tool' as const, tool_call_id: 'c1', content: '{"ok":true}' },
    ];
    for (const e of [entry(history), entry([]), entry(history, '"history-abc"')]) {
      const parts = entryParts(e);
      expect(parts.history).toEqual(history.slice(0, e.snapshot.history.length).map((m) => JSON.stringify(m)));
      expect(JSON.parse(parts.meta).snapshot.history).toBeUndefined();
      expect(JSON.parse(parts.settings)).toEqual(e.snapshot.settings);
      expect(entryFromParts(parts)).toEqual(JSON.parse(JSON.stringify(e)));
    }
  });

  it('serializes the settings once while no top-level value is replaced, and leaves the messages to the caller', () => {
    const e = entry([{ role: 'user', content: 'one' }]);
    entryHead(e);
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      expect(entryHead(e).history).toBe(e.snapshot.history);
      // Only the open calls and the owner.
      expect(stringify).toHaveBeenCalledTimes(1);
    } finally {
      stringify.mockRestore();
    }
  });

  it('serializes the settings again when a top-level value is replaced (a new voice, new tools)', () => {
    const e = entry([]);
    expect(JSON.parse(entryParts(e).settings).voice).toBeUndefined();
    (e.snapshot.settings as { voice: string }).voice = 'nova';
    expect(JSON.parse(entryParts(e).settings).voice).toBe('nova');
    e.snapshot.settings.tools = [];
    expect(JSON.parse(entryParts(e).settings).tools).toEqual([]);
  });
});

import type { ChatMessage } from '../../../session/providers/llm.ts';
import type { StashEntry } from '../../../session/resume/snapshot.ts';
import type { SessionSettings } from '../../../session/settings.ts';

/**
 * A session's settings serialized, with the top-level values it was made from: settings change
 * only by replacing a top-level value (live-settings.ts, tool-desk.ts), never inside one.
 */
const settingsJson = new WeakMap<object, { values: unknown[]; json: string }>();

/**
 * A stash entry as Redis keeps it: the history as one JSON text per message and the settings as
 * one (so a conversation written through at every turn end sends only what changed), and the
 * rest (open calls, the owner) as one JSON text.
 */
export interface EntryParts {
  meta: string;
  settings: string;
  history: string[];
}

/** The parts but the history's messages, left for the caller to serialize only those it sends. */
export type EntryHead = Omit<EntryParts, 'history'> & { history: ChatMessage[] };

export function entryHead(entry: StashEntry): EntryHead {
  const { history, settings, ...rest } = entry.snapshot;
  return { meta: JSON.stringify({ account: entry.account, sessionId: entry.sessionId, snapshot: rest }), settings: settingsOf(settings), history };
}


/** The entry back from its parts. */
export function entryFromParts(parts: EntryParts): StashEntry {
  const entry = JSON.parse(parts.meta) as StashEntry;
  entry.snapshot.settings = JSON.parse(parts.settings) as SessionSettings;
  entry.snapshot.history = parts.history.map((m) => JSON.parse(m) as ChatMessage);
  return entry;
}

/**
 * A history message's JSON. Not cached: a turn end serializes only its new messages
 * (history-sync.ts), and a cache keyed by message objects (a WeakMap entry per message) costs the
 * garbage collector more than the rare full rewrite saves.
 */
export function messageJson(message: ChatMessage): string {
  return JSON.stringify(message);
}

function settingsOf(settings: SessionSettings): string {
  const values = Object.values(settings);
  const cached = settingsJson.get(settings);
  if (cached && cached.values.length === values.length && cached.values.every((v, i) => v === values[i])) return cached.json;
  const json = JSON.stringify(settings);
  settingsJson.set(settings, { values, json });
  return json;
}

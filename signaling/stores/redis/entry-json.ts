import type { ChatMessage } from '../../../session/providers/llm.ts';
import type { StashEntry } from '../../../session/resume/snapshot.ts';

/** Messages already serialized, by identity: a history message is never changed once written. */
const messageJson = new WeakMap<object, string>();

/**
 * A stash entry as Redis keeps it: the history as one JSON text per message (so a conversation
 * written through at every turn end serializes, and sends, only its new messages), and the rest
 * (settings, open calls, the owner) as one JSON text without the history.
 */
export interface EntryParts {
  meta: string;
  history: string[];
}

export function entryParts(entry: StashEntry): EntryParts {
  const { history, ...snapshot } = entry.snapshot;
  return { meta: JSON.stringify({ ...entry, snapshot }), history: history.map(jsonOf) };
}

/** The entry back from its parts. */
export function entryFromParts(meta: string, history: string[]): StashEntry {
  const entry = JSON.parse(meta) as StashEntry;
  entry.snapshot.history = history.map((m) => JSON.parse(m) as ChatMessage);
  return entry;
}

function jsonOf(message: ChatMessage): string {
  let json = messageJson.get(message);
  if (json === undefined) {
    json = JSON.stringify(message);
    messageJson.set(message, json);
  }
  return json;
}

import { randomBytes } from 'node:crypto';
import type { StashEntry } from '../../../session/resume/snapshot.ts';

/** Messages already serialized, by identity: a history message is never changed once written. */
const messageJson = new WeakMap<object, string>();
/** Stands in for the history while the rest is serialized; random, so no content can contain it. */
const HOLE = `"history-${randomBytes(12).toString('hex')}"`;

/**
 * A stash entry as JSON, the same text JSON.stringify gives, built so that a conversation
 * written through at every turn end serializes each message once, not once per turn: the
 * history is spliced in from cached pieces, everything else is serialized as it is.
 */
export function entryJson(entry: StashEntry): string {
  const history = entry.snapshot.history.map((message) => {
    let json = messageJson.get(message);
    if (json === undefined) {
      json = JSON.stringify(message);
      messageJson.set(message, json);
    }
    return json;
  });
  const rest = JSON.stringify({ ...entry, snapshot: { ...entry.snapshot, history: HOLE.slice(1, -1) } });
  return rest.replace(HOLE, () => `[${history.join(',')}]`);
}

import type { RedisConnection, Script } from '../stores/redis/redis-connection.ts';

/** One write-through carried by a save script call. */
export interface SavedEntry {
  /** The entry's hash key. */
  key: string;
  expect: string;
  settings: string;
  messages: string[];
}

/**
 * Listens to the resume stash's save script calls on `connection` (define before the stash is
 * built): each call's entries, and every entry in the order written. The real script runs; this
 * only records.
 */
export function listenToSaveCalls(connection: RedisConnection): { calls: SavedEntry[][]; entries: SavedEntry[] } {
  const [calls, entries]: [SavedEntry[][], SavedEntry[]] = [[], []];
  const define = connection.script.bind(connection);
  connection.script = (name: string, lua: string): Script => {
    const run = define(name, lua);
    if (name !== 'parleyStashSave') return run;
    return (keys, args) => {
      const call: SavedEntry[] = [];
      // ARGV: ttl, then per entry: n, owner, meta, settings, expect, mark, keep, n messages.
      for (let [a, k] = [1, 0]; a < args.length; [a, k] = [a + 7 + Number(args[a]), k + 2]) {
        call.push({ key: keys[k]!, expect: String(args[a + 4]), settings: String(args[a + 3]), messages: args.slice(a + 7, a + 7 + Number(args[a])).map(String) });
      }
      calls.push(call);
      entries.push(...call);
      return run(keys, args);
    };
  };
  return { calls, entries };
}

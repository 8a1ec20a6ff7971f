import { randomBytes } from 'node:crypto';

/** How a save brings Redis's copy of a history (a list of message JSON texts) to the new one. */
export interface HistoryWrite {
  /** The write this one builds on ('' for a full rewrite): Redis applies it only on top of that one. */
  expect: string;
  /** This write's mark, stored with the entry. */
  mark: string;
  /** Messages of the stored list kept (from the front); the rest are removed. */
  keep: number;
  /** Messages appended after the kept ones. */
  tail: string[];
  /** The settings' JSON, or '' when Redis already holds these (they change rarely). */
  settings: string;
}

/** A token not written for this long is forgotten (its next write, if any, is a full one). */
const FORGET_AFTER_MS = 60_000;

/**
 * What this process last sent for each token's history and settings, so the next save sends
 * only the difference: new messages appended, a changed last reply replaced (a barge-in's
 * truncation), the settings only when they changed. Anything else is a full rewrite: a reset, or
 * the history budget trimming the oldest messages (which rewrites the note at the front, once per
 * tenth of the budget, not per turn). Each write carries the mark of the write it builds on and
 * Redis refuses it unless that is what it holds (a lost write, a Redis restart, an expired
 * entry): the caller then writes in full. Plans are optimistic (a write still in flight counts as
 * made), which the marks make safe. Messages are compared by identity (a history message is
 * never changed once written) and only those sent are serialized, so a turn end costs the same
 * whatever the conversation's length.
 */
export class HistorySync<M> {
  private readonly sent = new Map<string, { history: readonly M[]; settings: string; mark: string; at: number }>();
  private readonly nonce = randomBytes(6).toString('base64url');
  private writes = 0;
  private sweptAt = Date.now();

  constructor(private readonly serialize: (message: M) => string) {}

  plan(token: string, history: readonly M[], settings: string): HistoryWrite {
    const now = Date.now();
    if (now - this.sweptAt > FORGET_AFTER_MS) this.sweep(now);
    const before = this.sent.get(token);
    const mark = `${this.nonce}.${(this.writes += 1)}`;
    this.sent.set(token, { history, settings, mark, at: now });
    const keep = before ? common(before.history, history) : 0;
    if (!before || keep === 0) return { expect: '', mark, keep: 0, tail: history.map(this.serialize), settings };
    return { expect: before.mark, mark, keep, tail: history.slice(keep).map(this.serialize), settings: settings === before.settings ? '' : settings };
  }

  /** What Redis holds for the token is unknown (a failed write) or gone (taken, discarded). */
  forget(token: string): void {
    this.sent.delete(token);
  }

  private sweep(now: number): void {
    this.sweptAt = now;
    for (const [token, { at }] of this.sent) if (now - at > FORGET_AFTER_MS) this.sent.delete(token);
  }
}

/** How many messages at the front of `old` and `next` are the same. */
function common<M>(old: readonly M[], next: readonly M[]): number {
  let n = 0;
  while (n < next.length && n < old.length && old[n] === next[n]) n += 1;
  return n;
}

import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { Usage } from '../../session/protocol/usage.ts';
import { sqlEngines } from '../testing/sql-engines.ts';
import { openUsageStore, type UsageStore } from '../testing/usage-store.ts';
import { LedgerWriter } from '../usage/ledger-writer.ts';
import type { LedgerEntry } from '../usage/usage-ports.ts';
import { StoreUnavailableError } from './unavailable.ts';

/**
 * The usage store's contract: idempotent ledger writes that take units off credit once, revisions
 * by the difference, reports per session and per day for one account only, credit and limit
 * overrides. Run on every engine the store has.
 */

const ZERO: Usage = {
  session_s: 0, audio_in_s: 0, audio_out_s: 0, audio_heard_s: 0, asr_s: 0,
  llm_input_tokens: 0, llm_output_tokens: 0, think_input_tokens: 0, think_output_tokens: 0,
  tts_chars: 0, tool_calls: 0, llm_tokens_estimated: false, think_tokens_estimated: false,
};
let n = 0;
function entry(account: string, sessionId: string, at: string, usage: Partial<Usage>, units: number, turnId: string | null = `turn_${n}`): LedgerEntry {
  n += 1;
  return { id: `use_t:${n}`, account, sessionId, turnId, at, usage: { ...ZERO, ...usage }, units };
}

/**
 * SQLite with its own write path, SQLite with the portable one PostgreSQL takes, and a real
 * PostgreSQL (sqlEngines(): skipped, said on stderr, where it is not installed).
 */
const engines = sqlEngines().flatMap((engine) => (engine.name === 'sqlite' ? [{ engine, label: 'sqlite', portable: false }, { engine, label: 'sqlite, portable writes', portable: true }] : [{ engine, label: engine.name, portable: false }]));

describe.each(engines)('usage store on $label', ({ engine, portable }) => {
  const stores: UsageStore[] = [];
  let store: UsageStore;
  beforeEach(async () => {
    store = await openUsageStore(await engine.settings(), { portable });
    stores.push(store);
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await engine.cleanup();
  });

  it('a ledger whose database is gone rejects with StoreUnavailableError; the writer keeps the entries', async () => {
    const logs: string[] = [];
    const writer = new LedgerWriter(store.ledger, { warn: (_, msg) => logs.push(msg), info: (_, msg) => logs.push(msg), error: (_, msg) => logs.push(msg) });
    await store.book.setCredit('acme', 10);
    await store.close();
    await expect(store.ledger.record([entry('acme', 's1', '2026-03-01T10:00:00.000Z', { session_s: 1 }, 1)])).rejects.toBeInstanceOf(StoreUnavailableError);
    writer.record(entry('acme', 's1', '2026-03-01T10:00:01.000Z', { session_s: 2 }, 2));
    await writer.flush(200);
    expect(writer.inFlight('acme')).toBe(2);
    expect(logs.filter((m) => m.includes('failed'))).toHaveLength(1);
  });

  it('writes an entry once however often it is recorded, and takes its units off the credit once', async () => {
    await store.book.setCredit('acme', 100);
    const a = entry('acme', 's1', '2026-03-01T10:00:00.000Z', { session_s: 12.5 }, 12.5);
    const b = entry('acme', 's1', '2026-03-01T10:00:05.000Z', { session_s: 3 }, 3);
    await store.ledger.record([a, b]);
    await store.ledger.record([a]);
    await store.ledger.record([b, a]);
    expect(await store.book.credit('acme')).toBeCloseTo(84.5, 6);
    const report = await store.ledger.report({ account: 'acme', sessionLimit: 10 });
    expect(report.totals.session_s).toBeCloseTo(15.5, 6);
    expect(report.sessions).toHaveLength(1);
    expect(report.sessions[0]!.turns).toBe(2);
  });

  it('an account without a balance stays unlimited; others are charged only for their own entries', async () => {
    await store.book.setCredit('beta', 10);
    await store.ledger.record([entry('acme', 's1', '2026-03-01T10:00:00.000Z', { session_s: 5 }, 5), entry('beta', 's9', '2026-03-01T10:00:00.000Z', { session_s: 2 }, 2)]);
    expect(await store.book.credit('acme')).toBeNull();
    expect(await store.book.credit('beta')).toBeCloseTo(8, 6);
  });

  it('a revision rewrites the entry and moves the credit by the difference, once', async () => {
    await store.book.setCredit('acme', 50);
    const turn = entry('acme', 's1', '2026-03-01T10:00:00.000Z', { audio_out_s: 4, audio_heard_s: 4 }, 40);
    await store.ledger.record([turn]);
    const revised = { ...turn, usage: { ...turn.usage, audio_heard_s: 1.5 }, units: 15 };
    await store.ledger.revise(revised);
    await store.ledger.revise(revised);
    expect(await store.book.credit('acme')).toBeCloseTo(35, 6);
    const { totals } = await store.ledger.report({ account: 'acme', sessionLimit: 10 });
    expect(totals).toMatchObject({ audio_out_s: 4, audio_heard_s: 1.5, units: 15 });
  });

  it('reports totals, sessions (most recent first) and days for one account, within from/to and a session', async () => {
    await store.ledger.record([
      entry('acme', 'morning', '2026-03-01T09:00:00.000Z', { session_s: 10, llm_output_tokens: 7, tool_calls: 1 }, 10),
      entry('acme', 'morning', '2026-03-01T09:01:00.000Z', { session_s: 20, llm_tokens_estimated: true }, 20, null),
      entry('acme', 'evening', '2026-03-02T20:00:00.000Z', { session_s: 5, audio_in_s: 2.25, tts_chars: 40 }, 5),
      entry('intruder', 'morning', '2026-03-01T09:30:00.000Z', { session_s: 999 }, 999),
    ]);
    const all = await store.ledger.report({ account: 'acme', sessionLimit: 10 });
    expect(all.totals).toMatchObject({ session_s: 35, audio_in_s: 2.25, llm_output_tokens: 7, tts_chars: 40, tool_calls: 1, units: 35, llm_tokens_estimated: true, think_tokens_estimated: false });
    expect(all.sessions.map((s) => [s.session_id, s.session_s, s.turns])).toEqual([
      ['evening', 5, 1],
      ['morning', 30, 1],
    ]);
    expect(all.sessions[1]).toMatchObject({ first_at: '2026-03-01T09:00:00.000Z', last_at: '2026-03-01T09:01:00.000Z' });
    expect(all.days.map((d) => [d.day, d.session_s])).toEqual([
      ['2026-03-01', 30],
      ['2026-03-02', 5],
    ]);
    expect(all.truncated).toBe(false);
    const day2 = await store.ledger.report({ account: 'acme', from: '2026-03-02T00:00:00.000Z', to: '2026-03-03T00:00:00.000Z', sessionLimit: 10 });
    expect(day2.sessions.map((s) => s.session_id)).toEqual(['evening']);
    const one = await store.ledger.report({ account: 'acme', sessionId: 'morning', sessionLimit: 10 });
    expect(one.totals.session_s).toBe(30);
    const limited = await store.ledger.report({ account: 'acme', sessionLimit: 1 });
    expect(limited).toMatchObject({ truncated: true, sessions: [{ session_id: 'evening' }] });
    const nobody = await store.ledger.report({ account: 'nobody', sessionLimit: 10 });
    expect(nobody).toMatchObject({ sessions: [], days: [], truncated: false, totals: { session_s: 0, units: 0 } });
  });

  it('credit: set, add (from nothing, and racing the ledger without losing either), remove', async () => {
    expect(await store.book.addCredit('acme', 25)).toBeCloseTo(25, 6);
    await Promise.all([store.book.addCredit('acme', 10), store.ledger.record([entry('acme', 's', '2026-03-01T00:00:00.000Z', {}, 5)]), store.book.addCredit('acme', -3)]);
    expect(await store.book.credit('acme')).toBeCloseTo(27, 6);
    await store.book.setCredit('acme', 1.5);
    expect(await store.book.credit('acme')).toBe(1.5);
    await store.book.setCredit('acme', null);
    expect(await store.book.credit('acme')).toBeNull();
  });

  it('limit overrides: unset by default, set one at a time, 0 for none, null back to the default', async () => {
    const none = { max_sessions: null, session_starts_per_minute: null, key_exchanges_per_minute: null, input_text_per_second: null };
    expect(await store.book.limits('acme')).toEqual(none);
    expect(await store.book.setLimits('acme', { max_sessions: 3 })).toEqual({ ...none, max_sessions: 3 });
    expect(await store.book.setLimits('acme', { input_text_per_second: 0 })).toEqual({ ...none, max_sessions: 3, input_text_per_second: 0 });
    expect(await store.book.setLimits('acme', { max_sessions: null })).toEqual({ ...none, input_text_per_second: 0 });
    expect(await store.book.limits('beta')).toEqual(none);
  });
});

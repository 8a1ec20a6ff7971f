import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Usage } from '../../session/protocol/usage.ts';
import { LedgerWriter } from './ledger-writer.ts';
import type { LedgerEntry } from './usage-ports.ts';
import { postgresAvailable, startPostgres } from '../testing/postgres-server.ts';
import { openUsageStore, type UsageStore } from '../testing/usage-store.ts';

/**
 * The writer between sessions and the ledger, on a real SQLite file: batches, in order; a
 * revision before or after the write; the ledger failing (its table gone) and coming back with
 * nothing lost; what is in flight for the credit line.
 */

const ZERO: Usage = {
  session_s: 0, audio_in_s: 0, audio_out_s: 0, audio_heard_s: 0, asr_s: 0,
  llm_input_tokens: 0, llm_output_tokens: 0, think_input_tokens: 0, think_output_tokens: 0,
  tts_chars: 0, tool_calls: 0, llm_tokens_estimated: false, think_tokens_estimated: false,
};
let n = 0;
const entry = (units: number, usage: Partial<Usage> = { session_s: units }): LedgerEntry => {
  n += 1;
  return { id: `use_w:${n}`, account: 'acme', sessionId: 's1', turnId: `turn_${n}`, at: new Date().toISOString(), usage: { ...ZERO, ...usage }, units };
};

const logs: string[] = [];
const log = { warn: (_: object, msg: string) => logs.push(msg), info: (_: object, msg: string) => logs.push(msg), error: (_: object, msg: string) => logs.push(msg) };

let dir: string;
let store: UsageStore;
afterEach(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
  logs.length = 0;
});

async function open(): Promise<UsageStore> {
  dir = mkdtempSync(join(tmpdir(), 'parley-writer-'));
  store = await openUsageStore({ DATA_DIR: dir });
  return store;
}

describe('LedgerWriter', () => {
  it('writes what one turn of the event loop recorded in one batch, and tells which accounts changed', async () => {
    const { ledger, book } = await open();
    await book.setCredit('acme', 100);
    const changed: string[][] = [];
    const writer = new LedgerWriter(ledger, log, (accounts) => changed.push([...accounts]));
    for (let i = 0; i < 50; i += 1) writer.record(entry(1));
    expect(writer.inFlight('acme')).toBe(50);
    await writer.flush();
    expect(writer.inFlight('acme')).toBe(0);
    expect(changed).toEqual([['acme']]);
    expect(await book.credit('acme')).toBe(50);
    expect((await ledger.report({ account: 'acme', sessionLimit: 10 })).sessions[0]!.turns).toBe(50);
  });

  it('a revision before the write replaces the entry; after it, revises by the difference', async () => {
    const { ledger, book } = await open();
    await book.setCredit('acme', 100);
    const writer = new LedgerWriter(ledger, log);
    const early = entry(10, { audio_out_s: 1, audio_heard_s: 1 });
    writer.record(early);
    writer.record({ ...early, usage: { ...early.usage, audio_heard_s: 0.4 }, units: 4 });
    expect(writer.inFlight('acme')).toBe(4);
    await writer.flush();
    const late = entry(20);
    writer.record(late);
    await writer.flush();
    writer.record({ ...late, units: 5 });
    expect(writer.inFlight('acme')).toBe(-15);
    await writer.flush();
    expect(writer.inFlight('acme')).toBe(0);
    expect(await book.credit('acme')).toBeCloseTo(100 - 4 - 5, 6);
    expect((await ledger.report({ account: 'acme', sessionLimit: 10 })).totals).toMatchObject({ audio_heard_s: 0.4, units: 9 });
  });

  it('keeps entries while the ledger fails and writes them, in order, once it answers again', async () => {
    const { ledger } = await open();
    const writer = new LedgerWriter(ledger, log);
    // Another connection to the same file takes the table away: every write now fails.
    const side = new Database(join(dir, 'keys.sqlite3'));
    const schema = (side.prepare("SELECT sql FROM sqlite_master WHERE name = 'usage_ledger'").get() as { sql: string }).sql;
    side.exec('DROP TABLE usage_ledger');
    const during = [entry(1), entry(2), entry(3)];
    for (const e of during) writer.record(e);
    await writer.flush(300);
    expect(logs.filter((m) => m.includes('failed'))).toHaveLength(1);
    expect(writer.inFlight('acme')).toBe(6);
    writer.record(entry(4));
    side.exec(schema);
    side.close();
    await writer.flush(5000);
    expect(writer.inFlight('acme')).toBe(0);
    expect(logs.some((m) => m.includes('reachable again'))).toBe(true);
    const report = await ledger.report({ account: 'acme', sessionLimit: 10 });
    expect(report.totals.session_s).toBe(10);
    expect(report.sessions[0]!.turns).toBe(4);
  });

  it.skipIf(!postgresAvailable())('on PostgreSQL: the server stopped under writes and started again, every entry written once', async () => {
    const pg = await startPostgres();
    dir = mkdtempSync(join(tmpdir(), 'parley-writer-'));
    try {
      store = await openUsageStore({ DATA_DIR: dir, DATABASE_URL: await pg.createDatabase() });
      const { ledger, book } = store;
      await book.setCredit('acme', 100);
      const writer = new LedgerWriter(ledger, log);
      writer.record(entry(1));
      await writer.flush();
      await pg.stop();
      for (let i = 0; i < 5; i += 1) writer.record(entry(2));
      await writer.flush(300);
      expect(writer.inFlight('acme')).toBe(10);
      expect(logs.filter((m) => m.includes('failed'))).toHaveLength(1);
      await pg.start();
      await writer.flush(10_000);
      expect(writer.inFlight('acme')).toBe(0);
      expect(await book.credit('acme')).toBe(89);
      const report = await ledger.report({ account: 'acme', sessionLimit: 10 });
      expect(report.totals.session_s).toBe(11);
      expect(report.sessions[0]!.turns).toBe(6);
    } finally {
      await store.close();
      store = undefined as unknown as UsageStore;
      await pg.close();
    }
  }, 60_000);
});

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JsonLinesReportStore, type ReportKind, type ReportRecord, type ReportStore } from '../one-shot-store.ts';
import { sqlEngines } from '../testing/sql-engines.ts';
import { SqlReportStore } from './sql/sql-report-store.ts';
import { StoreUnavailableError } from './unavailable.ts';

interface Harness {
  store: ReportStore;
  /** What was stored, read back the way an operator would. */
  stored(kind: ReportKind): Promise<unknown[]>;
  breakIt(): Promise<void>;
}

/** The report store contract: JSON lines under DATA_DIR (embedded) and PostgreSQL. */
describe.each(sqlEngines())('ReportStore with $name', (engine) => {
  afterAll(() => engine.cleanup());

  const open = async (): Promise<Harness> => {
    const database = await engine.fresh();
    if (engine.name === 'postgres') {
      return {
        store: new SqlReportStore(database, 100),
        stored: async (kind) => (await database.db.selectFrom('reports').select('body').where('kind', '=', kind).orderBy('received_at').execute()).map((r) => r.body),
        breakIt: () => database.close(),
      };
    }
    const dir = join((await engine.settings()).DATA_DIR, 'reports');
    const file = (kind: ReportKind) => join(dir, kind === 'feedback' ? 'feedback.jsonl' : 'client-errors.jsonl');
    return {
      store: new JsonLinesReportStore(dir, 1 << 20),
      stored: async (kind) => readFileSync(file(kind), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown),
      // A file where the directory should be: appends fail as a broken disk would make them.
      breakIt: async () => writeFileSync(dir, 'not a directory'),
    };
  };

  it('keeps every report whole, by kind, in arrival order', async () => {
    const h = await open();
    const record = (id: string, extra: Record<string, unknown>): ReportRecord => ({ id, received_at: new Date().toISOString(), account: 'acme', session_id: 'call-1', ...extra });
    const feedback = [record('fb_1', { rating: 5, text: 'clear' }), record('fb_2', { rating: 'down', device: 'phone' })];
    const crash = record('ce_1', { detail: 'AudioContext failed', context: { state: 'suspended', nested: [1, 2] } });
    for (const r of feedback) await h.store.append('feedback', r);
    await h.store.append('client_error', crash);
    expect(await h.stored('feedback')).toEqual(feedback);
    expect(await h.stored('client_error')).toEqual([crash]);
  });

  it('lists one account\'s reports, newest first, by period, session and kind, without the account', async () => {
    const h = await open();
    const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
    const put = (kind: ReportKind, id: string, account: string, minute: number, session = 'call-1') =>
      h.store.append(kind, { id, received_at: at(minute), account, session_id: session, text: id });
    await put('feedback', 'fb_1', 'acme', 1);
    await put('feedback', 'fb_2', 'other', 2);
    await put('client_error', 'ce_1', 'acme', 3, 'call-2');
    await put('feedback', 'fb_3', 'acme', 4);
    const all = await h.store.list({ account: 'acme', limit: 10 });
    expect(all.reports.map((r) => [r.kind, r.id])).toEqual([['feedback', 'fb_3'], ['client_error', 'ce_1'], ['feedback', 'fb_1']]);
    expect(all.reports.every((r) => !('account' in r))).toBe(true);
    expect(all.truncated).toBe(false);
    expect((await h.store.list({ account: 'acme', from: at(2), to: at(4), limit: 10 })).reports.map((r) => r.id)).toEqual(['ce_1']);
    expect((await h.store.list({ account: 'acme', sessionId: 'call-1', limit: 10 })).reports.map((r) => r.id)).toEqual(['fb_3', 'fb_1']);
    expect((await h.store.list({ account: 'acme', kind: 'client_error', limit: 10 })).reports.map((r) => r.id)).toEqual(['ce_1']);
    expect(await h.store.list({ account: 'acme', limit: 2 })).toMatchObject({ truncated: true, reports: [{ id: 'fb_3' }, { id: 'ce_1' }] });
  });

  if (engine.name === 'sqlite') {
    it('the JSON-lines listing includes the rotated file', async () => {
      const dir = join((await engine.settings()).DATA_DIR, 'rotating');
      const store = new JsonLinesReportStore(dir, 200);
      for (let i = 0; i < 4; i += 1) await store.append('feedback', { id: `fb_${i}`, received_at: `2026-03-01T10:0${i}:00.000Z`, account: 'acme', session_id: 's', text: 'x'.repeat(60) });
      expect(readFileSync(join(dir, 'feedback.jsonl.1'), 'utf8')).toContain('fb_');
      expect((await store.list({ account: 'acme', limit: 10 })).reports.map((r) => r.id)).toEqual(['fb_3', 'fb_2']);
    });
  }

  it('a report that cannot be stored rejects (the sender is not acknowledged)', async () => {
    const h = await open();
    await h.breakIt();
    const failed = h.store.append('feedback', { id: 'fb_x', received_at: new Date().toISOString(), account: 'acme', session_id: 's' });
    if (engine.name === 'postgres') await expect(failed).rejects.toBeInstanceOf(StoreUnavailableError);
    else await expect(failed).rejects.toThrow();
  });

  it.runIf(engine.name === 'postgres')('keeps the newest REPORTS_MAX_ROWS of a kind and drops the oldest as new ones arrive', async () => {
    const database = await engine.fresh();
    const store = new SqlReportStore(database, 100);
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
    for (let i = 0; i < 103; i += 1) await store.append('feedback', { id: `fb_${i}`, received_at: at(i), account: 'acme', session_id: 's', rating: 5 });
    await store.append('client_error', { id: 'ce_0', received_at: at(0), account: 'acme', session_id: 's', detail: 'x' });
    const ids = (await database.db.selectFrom('reports').select(['id', 'kind']).orderBy('received_at').execute()).filter((r) => r.kind === 'feedback').map((r) => r.id);
    expect(ids).toHaveLength(100);
    expect(ids[0]).toBe('fb_3');
    expect(ids.at(-1)).toBe('fb_102');
    expect(await database.db.selectFrom('reports').select('id').where('kind', '=', 'client_error').execute()).toHaveLength(1);
  });
});

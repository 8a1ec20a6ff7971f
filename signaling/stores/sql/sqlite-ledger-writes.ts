import type Database from 'better-sqlite3';
import type { LedgerEntry } from '../../usage/usage-ports.ts';
import { ledgerRow } from './ledger-rows.ts';

/**
 * The ledger's hot write on SQLite: prepared statements run synchronously in one transaction.
 * Through the query builder a one-entry write cost ~330 µs of CPU (building and compiling two
 * statements, a transaction of awaited steps); this costs a few tens, measured side by side in
 * `npm run bench -- metering`. Same statements, same effect as the portable path. Returns false
 * (nothing done) while a query-builder transaction holds the same handle: better-sqlite3 would
 * nest into it, so the portable path waits its turn instead.
 */
export function sqliteLedgerWrites(file: Database.Database): (entries: readonly LedgerEntry[]) => boolean {
  const insert = file.prepare(
    `INSERT INTO usage_ledger (id, account, session_id, turn_id, at, day, session_s, audio_in_s, audio_out_s, audio_heard_s, asr_s,
       llm_input_tokens, llm_output_tokens, think_input_tokens, think_output_tokens, tts_chars, tool_calls, llm_tokens_estimated, think_tokens_estimated, units)
     VALUES (@id, @account, @session_id, @turn_id, @at, @day, @session_s, @audio_in_s, @audio_out_s, @audio_heard_s, @asr_s,
       @llm_input_tokens, @llm_output_tokens, @think_input_tokens, @think_output_tokens, @tts_chars, @tool_calls, @llm_tokens_estimated, @think_tokens_estimated, @units)
     ON CONFLICT (id) DO NOTHING`,
  );
  const spend = file.prepare('UPDATE credit SET balance = balance - ?, updated_at = ? WHERE account = ?');
  // IMMEDIATE: the write lock up front, so a CLI writing the same file is waited for (busy_timeout).
  const write = file.transaction((entries: readonly LedgerEntry[]) => {
    const spent = new Map<string, number>();
    for (const entry of entries) {
      if (insert.run(ledgerRow(entry)).changes === 1) spent.set(entry.account, (spent.get(entry.account) ?? 0) + entry.units);
    }
    const now = new Date().toISOString();
    for (const [account, units] of spent) if (units !== 0) spend.run(units, now, account);
  }).immediate;
  return (entries) => {
    if (file.inTransaction) return false;
    write(entries);
    return true;
  };
}

import type { LedgerEntry } from '../../usage/usage-ports.ts';
import type { Tables } from './schema.ts';

/** A ledger entry as its table row. */
export function ledgerRow(entry: LedgerEntry): Tables['usage_ledger'] {
  const u = entry.usage;
  return {
    id: entry.id,
    account: entry.account,
    session_id: entry.sessionId,
    turn_id: entry.turnId,
    at: entry.at,
    day: entry.at.slice(0, 10),
    session_s: u.session_s,
    audio_in_s: u.audio_in_s,
    audio_out_s: u.audio_out_s,
    audio_heard_s: u.audio_heard_s,
    asr_s: u.asr_s,
    llm_input_tokens: u.llm_input_tokens,
    llm_output_tokens: u.llm_output_tokens,
    think_input_tokens: u.think_input_tokens,
    think_output_tokens: u.think_output_tokens,
    tts_chars: u.tts_chars,
    tool_calls: u.tool_calls,
    llm_tokens_estimated: u.llm_tokens_estimated ? 1 : 0,
    think_tokens_estimated: u.think_tokens_estimated ? 1 : 0,
    units: entry.units,
  };
}

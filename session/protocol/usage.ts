import { z } from 'zod';

/**
 * What Parley meters, per turn (on `done.usage`) and in the usage ledger. Seconds are decimals
 * rounded to the millisecond; counts are integers. Token meters come from the model provider's
 * own report when it gives one, otherwise they are estimated (about four characters a token) and
 * the matching `*_tokens_estimated` flag is true. think_deeply's tokens are kept apart.
 */
export const METERS = [
  /** Wall time the session was open; it accrues while idle too. */
  'session_s',
  /** Uplink microphone audio received. */
  'audio_in_s',
  /** Assistant audio sent. */
  'audio_out_s',
  /** Assistant audio heard: what was sent, less what the client's playback report says was cut. */
  'audio_heard_s',
  /** Audio handed to speech recognition. */
  'asr_s',
  'llm_input_tokens',
  'llm_output_tokens',
  /** The managed think_deeply tool's model calls. */
  'think_input_tokens',
  'think_output_tokens',
  /** Characters handed to speech synthesis. */
  'tts_chars',
  /** Tool calls the model made (client and managed tools). */
  'tool_calls',
] as const;

export type Meter = (typeof METERS)[number];
export type Meters = Record<Meter, number>;

const seconds = z.number().min(0);
const count = z.number().int().min(0);

/** done.usage: one turn's meters (open: more meters may be added later). */
export const Usage = z.looseObject({
  session_s: seconds,
  audio_in_s: seconds,
  audio_out_s: seconds,
  audio_heard_s: seconds,
  asr_s: seconds,
  llm_input_tokens: count,
  llm_output_tokens: count,
  think_input_tokens: count,
  think_output_tokens: count,
  tts_chars: count,
  tool_calls: count,
  llm_tokens_estimated: z.boolean(),
  think_tokens_estimated: z.boolean(),
});
export type Usage = z.infer<typeof Usage>;

/** Why the server plans to close a session (session_closing_soon.reason). */
export const CLOSING_REASONS = ['session_window', 'max_duration', 'idle', 'credit', 'restart'] as const;
export type ClosingReason = (typeof CLOSING_REASONS)[number];

/** The per-account limits (error `limit` field, HTTP 429 body, CLI overrides). */
export const ACCOUNT_LIMITS = ['max_sessions', 'session_starts_per_minute', 'key_exchanges_per_minute', 'input_text_per_second'] as const;
export type AccountLimit = (typeof ACCOUNT_LIMITS)[number];

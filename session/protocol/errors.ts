/**
 * Every error code the server emits, in one place: docs/protocol.md documents each one and a test
 * checks that it does. SPEC's codes keep SPEC's retryable defaults. Callers build error frames
 * through `errorFrame`, so a code's retryable flag is never written twice.
 */

export interface ErrorSpec {
  retryable: boolean;
  /** WebSocket close code when the error ends the connection; absent for non-fatal errors. */
  close?: number;
}

/** Connection-level codes: the start, authentication, framing and the socket's life. */
export const WS_ERRORS = {
  // SPEC codes
  unauthorized: { retryable: false, close: 4401 },
  invalid_start_frame: { retryable: false, close: 4400 },
  invalid_tools: { retryable: false, close: 4400 },
  server_busy: { retryable: true, close: 1013 },
  server_restarting: { retryable: true, close: 1012 },
  resume_failed: { retryable: false },
  // Connection-level codes of our own
  key_expired: { retryable: false, close: 4403 },
  start_timeout: { retryable: true, close: 4408 },
  already_started: { retryable: false },
  invalid_json: { retryable: false },
  unknown_frame_type: { retryable: false },
  invalid_frame: { retryable: false },
  frame_too_large: { retryable: false },
  invalid_offer: { retryable: false },
  unexpected_offer: { retryable: false },
  not_ready: { retryable: true },
  voice_unavailable: { retryable: false, close: 4400 },
  web_search_unavailable: { retryable: false, close: 4400 },
  slow_consumer: { retryable: true, close: 4429 },
  /** A per-account limit (usage issue): fatal at start (4429), a refused frame otherwise. */
  rate_limited: { retryable: true, close: 4429 },
  /** The account's credit ran out: at start, or after session_closing_soon (resumable after a top-up). */
  credit_exhausted: { retryable: false, close: 4402 },
  too_many_attempts: { retryable: true, close: 4429 },
  internal_error: { retryable: true, close: 1011 },
  /** A shared store (PostgreSQL, Redis) cannot answer: a persistent key, a resume token or a report waits for it. */
  store_unavailable: { retryable: true, close: 1013 },
  /** This conversation's resume token was used by another connection, which now holds the conversation. */
  resumed_elsewhere: { retryable: false, close: 4409 },
} as const satisfies Record<string, ErrorSpec>;

/** Codes the session core emits while the connection stays open. */
export const SESSION_ERRORS = {
  model_error: { retryable: true },
  asr_error: { retryable: true },
  tts_error: { retryable: true },
  modality_mismatch: { retryable: false },
  unknown_voice: { retryable: false },
  reply_in_progress: { retryable: true },
  unsupported_frame: { retryable: false },
} as const satisfies Record<string, ErrorSpec>;

/** Codes of the tool machinery (the session stays open). */
export const TOOL_ERRORS = {
  unknown_tool_call: { retryable: false },
  partial_limit: { retryable: false },
  partial_too_large: { retryable: false },
  unknown_approval: { retryable: false },
  invalid_interaction: { retryable: false },
} as const satisfies Record<string, ErrorSpec>;

/** HTTP error bodies (`{code, detail, retryable}`): each code's status and retryable flag. */
export const HTTP_ERRORS = {
  invalid_session_id: { status: 400, retryable: false },
  invalid_request: { status: 400, retryable: false },
  invalid_parameter: { status: 400, retryable: false },
  unauthorized: { status: 401, retryable: false },
  forbidden: { status: 403, retryable: false },
  forbidden_origin: { status: 403, retryable: false },
  not_found: { status: 404, retryable: false },
  method_not_allowed: { status: 405, retryable: false },
  payload_too_large: { status: 413, retryable: false },
  credit_exhausted: { status: 402, retryable: false },
  rate_limited: { status: 429, retryable: true },
  not_json: { status: 415, retryable: false },
  too_many_attempts: { status: 429, retryable: true },
  server_restarting: { status: 503, retryable: true },
  store_unavailable: { status: 503, retryable: true },
  internal_error: { status: 500, retryable: true },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type WsErrorCode = keyof typeof WS_ERRORS;
export type SessionErrorCode = keyof typeof SESSION_ERRORS;
export type ToolErrorCode = keyof typeof TOOL_ERRORS;
export type HttpErrorCode = keyof typeof HTTP_ERRORS;
export type ErrorCode = WsErrorCode | SessionErrorCode | ToolErrorCode;

const ALL_ERRORS: Record<ErrorCode, ErrorSpec> = { ...WS_ERRORS, ...SESSION_ERRORS, ...TOOL_ERRORS };

/** An error frame with the code's documented retryable flag. */
export function errorFrame(code: ErrorCode, detail: string): { type: 'error'; code: ErrorCode; detail: string; retryable: boolean } {
  return { type: 'error', code, detail, retryable: ALL_ERRORS[code].retryable };
}

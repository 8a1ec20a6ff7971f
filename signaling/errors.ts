/**
 * Every error code the WebSocket and HTTP layers emit, in one place. The README documents each
 * one and a test checks that it does. SPEC's codes keep SPEC's retryable defaults.
 */

export interface ErrorSpec {
  retryable: boolean;
  /** WebSocket close code when the error ends the connection; absent for non-fatal errors. */
  close?: number;
}

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
  internal_error: { retryable: true, close: 1011 },
} as const satisfies Record<string, ErrorSpec>;

export type WsErrorCode = keyof typeof WS_ERRORS;

export const HTTP_ERRORS = {
  invalid_session_id: 400,
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  not_json: 415,
  server_restarting: 503,
  internal_error: 500,
} as const;

export type HttpErrorCode = keyof typeof HTTP_ERRORS;

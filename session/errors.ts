/**
 * Error codes the session core emits in error frames while the connection stays open. The
 * README documents each one and a test checks that it does.
 */
export const SESSION_ERRORS = {
  model_error: { retryable: true },
  modality_mismatch: { retryable: false },
  unknown_voice: { retryable: false },
  reply_in_progress: { retryable: true },
  unsupported_frame: { retryable: false },
} as const satisfies Record<string, { retryable: boolean }>;

export type SessionErrorCode = keyof typeof SESSION_ERRORS;

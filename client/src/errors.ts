/**
 * Errors raised by the library. `code` is stable: the server's error code when the server refused
 * something (unauthorized, resume_failed, ...), or one of LIBRARY_ERROR_CODES below for failures
 * the library itself detects. Match on `code`, never on `message`.
 */
export class RealtimeError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'RealtimeError';
  }
}

/** Codes the library raises on its own (server codes pass through unchanged). */
export const LIBRARY_ERROR_CODES = {
  /** connect() while a connection is open, being opened or being recovered. */
  already_connected: 'connect() was called while connected; close() first',
  /** importResumeState() after the first connect, or a state for another session id. */
  resume_state_rejected: 'the resume state cannot be imported now or does not fit this client',
  /** The socket closed before ready, or before an acknowledgement arrived. */
  connection_closed: 'the connection closed before the answer arrived',
  /** A request was made while no connection was open. */
  not_connected: 'not connected',
  /** An acknowledgement (inject_context_ack, tool_interaction_update_ack, feedback_ack) did not arrive in time. */
  ack_timeout: 'no acknowledgement in time',
  /** waitForNarrationState() timed out. */
  narration_timeout: 'the narration did not reach the state in time',
  /** The operation needs the other modality (startMic in a text session, sendText in a voice one). */
  modality_mismatch: 'not available in this modality',
  /** Capture delivered no frame twice in a row within captureStartupTimeoutMs. */
  capture_stalled: 'the microphone delivered no audio',
  /** The user or the browser refused microphone access. */
  mic_permission_denied: 'microphone access was denied',
  /** No microphone (or not the requested one). */
  mic_not_found: 'no microphone found',
  /** Any other capture failure (no AudioWorklet, device busy, ...). */
  capture_failed: 'the microphone could not be started',
  /** Automatic reconnection gave up after maxReconnectAttempts. */
  reconnect_exhausted: 'could not reconnect',
  /** The WebRTC transport could not be negotiated. */
  webrtc_failed: 'the WebRTC transport failed',
} as const;

export type LibraryErrorCode = keyof typeof LIBRARY_ERROR_CODES;

export function libraryError(code: LibraryErrorCode, detail?: string, retryable = false): RealtimeError {
  return new RealtimeError(code, detail ?? LIBRARY_ERROR_CODES[code], retryable);
}

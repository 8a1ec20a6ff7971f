/**
 * The protocol's limits (SPEC's Limits table and the bounds SPEC leaves to us), in one place.
 * Free of zod and of Node built-ins, so the browser library may import it too.
 */

/** SPEC: 1 to 64 characters; first a letter, digit, underscore or hyphen, later also a period. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

export const LIMITS = {
  /** input_text.text and inject_context.text, in characters. */
  textChars: 20000,
  messageIdChars: 128,
  deferredHandleChars: 200,
  statusLabelChars: 80,
  progressNoteChars: 500,
  /** tool_partial_result.content as compact JSON. */
  partialBytes: 2048,
  partialsPerCall: 8,
  interactionIdChars: 64,
  interactionPromptChars: 500,
  interactionOptions: 8,
  interactionOptionChars: 64,
  /** A resolver binding as compact JSON. */
  bindingBytes: 2048,
  interactionNoteChars: 200,
  turnEndThreshold: { min: 0.05, max: 0.5 },
  // Bounds of our own where SPEC sets none.
  toolsPerSession: 128,
  apiKeyChars: 2048,
  resumeTokenChars: 512,
  voiceKeyChars: 64,
  instructionsChars: 32000,
  /** client_error.context as compact JSON. */
  reportContextChars: 8192,
  /** Nesting of any JSON a client or a model sends (objects and arrays); see bounded-json.ts. */
  jsonDepth: 64,
} as const;

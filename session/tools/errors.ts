/** Error codes of the tool machinery (error frames; the session stays open). */
export const TOOL_ERRORS = {
  unknown_tool_call: { retryable: false },
  partial_limit: { retryable: false },
  partial_too_large: { retryable: false },
  unknown_approval: { retryable: false },
  invalid_interaction: { retryable: false },
} as const satisfies Record<string, { retryable: boolean }>;

export type ToolErrorCode = keyof typeof TOOL_ERRORS;

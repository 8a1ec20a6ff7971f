import type { ToolCallRequest } from '../providers/llm.ts';

export const TOOL_OUTCOMES = ['succeeded', 'failed', 'cancelled', 'timed_out', 'unknown'] as const;
export type ToolOutcome = (typeof TOOL_OUTCOMES)[number];

/** How a call ended, as the model is told. `verified` is only ever true with `succeeded`. */
export interface ToolResolution {
  outcome: ToolOutcome;
  verified: boolean;
  content: unknown;
}

/** What one planning round's calls produced, ready for the history. */
export interface ToolRoundResult {
  results: { call: ToolCallRequest; content: string }[];
  /** The agent called end_call: speak only this farewell, then end the session. */
  farewell?: string;
}

/** The model-facing text for a resolution: outcome and verification first, so honesty is easy. */
export function describeResolution(resolution: ToolResolution): string {
  return JSON.stringify({
    outcome: resolution.outcome,
    verified: resolution.outcome === 'succeeded' && resolution.verified,
    content: resolution.content,
  });
}

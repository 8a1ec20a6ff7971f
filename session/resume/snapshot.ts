import type { ChatMessage, ToolCallRequest } from '../providers/llm.ts';
import type { SessionSettings } from '../settings.ts';
import type { DeferredJob } from '../tools/tool-calls.ts';

/**
 * Everything a dropped conversation needs to go on: plain data only, so a shared stash
 * (Redis) can store it as JSON. Interaction state is deliberately absent (SPEC).
 */
export interface SessionSnapshot {
  settings: SessionSettings;
  history: ChatMessage[];
  injectedIds: string[];
  pendingCalls: { request: ToolCallRequest; job: DeferredJob | undefined; deferrable: boolean }[];
  /** Ids of calls already answered (absent in entries stashed before it existed). */
  closedCalls?: string[];
  bargeSeq: number;
  greeted: boolean;
  /** When the conversation first started (epoch ms): MAX_SESSION_S counts from here across resumes. */
  openedAt?: number;
}

export interface StashEntry {
  account: string;
  sessionId: string;
  snapshot: SessionSnapshot;
}

import type { ChatMessage } from '../providers/llm.ts';
import type { SessionSettings } from '../settings.ts';
import type { PendingCall } from '../tools/call-records.ts';

/**
 * Everything a dropped conversation needs to go on: plain data only, so a shared stash
 * (Redis) can store it as JSON. Interaction state is deliberately absent (SPEC).
 */
export interface SessionSnapshot {
  settings: SessionSettings;
  history: ChatMessage[];
  injectedIds: string[];
  pendingCalls: PendingCall[];
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

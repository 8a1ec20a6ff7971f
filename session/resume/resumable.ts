import type { ContextInjection } from '../context-injection.ts';
import type { Floor } from '../floor.ts';
import type { ConversationHistory } from '../history.ts';
import type { SessionSettings } from '../settings.ts';
import type { ToolCalls } from '../tools/tool-calls.ts';
import type { SessionSnapshot } from './snapshot.ts';

/** The parts of a session a snapshot carries across a dropped connection. */
export interface ResumableParts {
  settings: SessionSettings;
  history: ConversationHistory;
  injection: Pick<ContextInjection, 'ids' | 'adopt'>;
  floor: Pick<Floor, 'bargeSeq' | 'restoreBargeSeq'>;
  calls: Pick<ToolCalls, 'pending' | 'adopt' | 'closedIds' | 'adoptClosed'>;
}

/**
 * What a resume needs. `copy` false shares the live settings and messages: for a caller that
 * serializes the snapshot at once (a shared stash's write-through), where copying would be waste.
 */
export function captureSnapshot(parts: ResumableParts, greeted: boolean, copy = true): SessionSnapshot {
  return {
    settings: copy ? structuredClone(parts.settings) : parts.settings,
    history: copy ? parts.history.snapshot() : parts.history.view(),
    injectedIds: parts.injection.ids(),
    pendingCalls: parts.calls.pending(),
    closedCalls: parts.calls.closedIds(),
    bargeSeq: parts.floor.bargeSeq,
    greeted,
  };
}

/** Puts a stashed conversation back before the session begins; pending calls keep their default timeout. */
export function applySnapshot(parts: ResumableParts, snapshot: SessionSnapshot, callTimeoutMs: number): void {
  parts.history.restore(snapshot.history);
  parts.injection.adopt(snapshot.injectedIds);
  parts.floor.restoreBargeSeq(snapshot.bargeSeq);
  parts.calls.adopt(snapshot.pendingCalls, callTimeoutMs);
  parts.calls.adoptClosed(snapshot.closedCalls ?? []);
}

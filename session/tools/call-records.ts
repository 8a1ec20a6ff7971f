import type { ToolCallRequest } from '../providers/llm.ts';
import type { ServerFrame } from '../protocol/server.ts';
import type { ToolResolution } from './types.ts';

/** What the tool-call table (tool-calls.ts) keeps of a call, and what it asks of its session. */

export interface DeferredJob {
  jobId: string;
  callId: string;
  handle: string;
  name: string;
  statusLabel: string;
  deadline: number;
}

export type CallState = 'open' | 'resolved' | 'deferred' | 'cancelled';

export interface Call {
  request: ToolCallRequest;
  state: CallState;
  deferrable: boolean;
  partials: number;
  timer: NodeJS.Timeout | undefined;
  /** The turn waiting on this call; cleared when that turn was interrupted. */
  waiter: ((resolution: ToolResolution) => void) | undefined;
  job: DeferredJob | undefined;
  /** A server-side tool's call: its cancellation. Clients never see or touch these calls. */
  server: AbortController | undefined;
}

/** A call a snapshot carries; `server` calls cannot outlive their process and end on resume. */
export interface PendingCall {
  request: ToolCallRequest;
  job: DeferredJob | undefined;
  deferrable: boolean;
  server?: true;
}

export interface ToolCallHooks {
  send(frame: ServerFrame): void;
  /** A result arrived after its turn stopped waiting (interrupted): record it, maybe narrate. */
  lateResult(call: ToolCallRequest, resolution: ToolResolution): void;
  /** A deferred job ended (result, host cancel or timeout). */
  jobEnded(job: DeferredJob, resolution: ToolResolution): void;
  /** Context notes (progress, partials) for the model. */
  note(text: string): void;
  /** A call closed for good: its terminal result ('resolved'), or a cancel or timeout from either side. */
  ended?(callId: string, how: 'resolved' | 'cancelled', outcome: ToolResolution['outcome']): void;
  deferredTimeoutMs: number;
}

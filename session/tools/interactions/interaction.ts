import type { z } from 'zod';
import type { Interaction, Resolver } from '../../protocol/client.ts';
import { LIMITS } from '../../protocol/limits.ts';

/** An interaction as the client sent it inside tool_partial_result (already schema-checked). */
export type InteractionInput = z.infer<typeof Interaction>;
/** A resolver binding: `{tool, args?, option_args?, answer_arg?}`. */
export type Binding = z.infer<typeof Resolver>;

/** SPEC "Interaction narration states": the values of tool_job_narration.state. */
export type NarrationState = 'queued' | 'started' | 'superseded' | 'cancelled' | 'failed' | 'resolved';
/** What tool_interaction_update may ask for, and how a decision closes. */
export type CloseState = 'resolved' | 'cancelled' | 'superseded';
export const CLOSE_STATES: readonly string[] = ['resolved', 'cancelled', 'superseded'];

export const MAX_INTERACTION_ID = 64;
/** SPEC: the binding as compact JSON is at most 2 KiB. */
export const MAX_BINDING_BYTES = LIMITS.bindingBytes;

/**
 * One question a tool raised. Two lifecycles live side by side: the narration (is the question
 * being put to the user: queued → started → a terminal state) and the decision (is it still
 * open: closed by the host, by the call's end or by a newer ask; settled conversation-side by
 * the model's interaction_transition). A user turn that supersedes the narration leaves the
 * decision open.
 */
export interface Ask {
  id: string;
  callId: string;
  /** The job id tool_job_narration reports: the deferred job's id, else the call id (fixed at raise). */
  jobId: string;
  toolName: string;
  prompt: string;
  /** Absent for a free-text ask. */
  options: string[] | undefined;
  /** Dropped (undefined) when its tool is unknown or ineligible. */
  binding: Binding | undefined;
  /** The last narration state reported; undefined until the first report. */
  narration: NarrationState | undefined;
  /** Something of its narration was delivered (a text_delta in text, audio in voice). */
  voiced: boolean;
  /** The conversation settled it (the model resolved or superseded it, or a reset dropped it). */
  decided: boolean;
  /** Call id of a bound resolver still running after its turn stopped waiting. */
  resolving: string | undefined;
  /** The decision is closed: the first close wins. */
  closed: CloseState | undefined;
  /** Narration turns that claimed it (spoken delivery attempts). */
  attempts: number;
  /** Watchdog rounds in the current delivery cycle (reset at every queued). */
  rounds: number;
  watchdog: NodeJS.Timeout | undefined;
}

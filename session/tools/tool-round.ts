import type { ServerFrame } from '../protocol/server.ts';
import type { ToolDeclaration } from '../protocol/tools.ts';
import type { ToolCallRequest } from '../providers/llm.ts';
import type { WebSearch } from '../providers/search.ts';
import type { Permissions } from './permissions.ts';
import type { ToolCalls } from './tool-calls.ts';
import { isManaged, type ManagedToolName } from './tool-set.ts';
import { describeResolution, type ToolOutcome, type ToolResolution, type ToolRoundResult } from './types.ts';
import { clientDetail } from '../providers/provider-error.ts';

export interface ToolRoundDeps {
  send(frame: ServerFrame): void;
  calls: ToolCalls;
  permissions: Permissions;
  clientTools(): ToolDeclaration[];
  /**
   * Whether a managed tool is on in this session. web_search and end_call are managed only
   * while mode enables them; otherwise the name is an ordinary (client) tool name, and the
   * agent cannot end the session.
   */
  managedEnabled(name: ManagedToolName): boolean;
  search: WebSearch | undefined;
  defaultTimeoutMs: number;
  /** think_deeply: starts a background job; resolves with what the turn is told now. */
  startDeepThought(call: ToolCallRequest): ToolResolution;
  /** cancel_pending_job. */
  cancelJob(jobId: string | undefined): ToolResolution;
  /** interaction_transition: settle a voiced question (interactions/interactions.ts). */
  transition(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResolution>;
  /** A call that did not go to the client ended (client calls report when they settle, in ToolCalls). */
  ended(outcome: ToolOutcome): void;
}

const failed = (content: string): ToolResolution => ({ outcome: 'failed', verified: false, content });

/**
 * Runs one planning round's tool calls side by side: client tools through tool_call (after an
 * approval for requires_permission tools), managed tools here. Resolves when every call has an
 * answer for the model, or at once with "still running" answers when the turn is interrupted.
 */
export async function runToolRound(deps: ToolRoundDeps, calls: ToolCallRequest[], signal: AbortSignal): Promise<ToolRoundResult> {
  let farewell: string | undefined;
  const results = await Promise.all(
    calls.map(async (call) => {
      if (call.name === 'end_call' && deps.managedEnabled('end_call')) {
        farewell = typeof call.args.farewell === 'string' && call.args.farewell.trim() ? call.args.farewell.trim() : 'Goodbye!';
        deps.ended('succeeded');
        return { call, content: describeResolution({ outcome: 'succeeded', verified: true, content: 'ending the call' }) };
      }
      const resolution = await runOne(deps, call, signal);
      return { call, content: describeResolution(resolution) };
    }),
  );
  return farewell === undefined ? { results } : { results, farewell };
}

async function runOne(deps: ToolRoundDeps, call: ToolCallRequest, signal: AbortSignal): Promise<ToolResolution> {
  const ended = (resolution: ToolResolution): ToolResolution => {
    deps.ended(resolution.outcome);
    return resolution;
  };
  if (isManaged(call.name) && deps.managedEnabled(call.name)) return ended(await runManaged(deps, call, signal));
  const declared = deps.clientTools().find((t) => t.name === call.name);
  if (!declared) return ended(failed(`there is no tool named ${call.name}`));
  if (declared.requires_permission) {
    const approved = await deps.permissions.request(call.name, call.args, signal);
    if (!approved) return ended({ outcome: 'cancelled', verified: false, content: 'the user did not give permission; the action was not taken' });
  }
  if (signal.aborted) return ended({ outcome: 'unknown', verified: false, content: 'not run: the user interrupted' });
  return deps.calls.run(call, { timeoutMs: declared.timeout_ms ?? deps.defaultTimeoutMs, deferrable: declared.deferrable === true }, signal);
}

async function runManaged(deps: ToolRoundDeps, call: ToolCallRequest, signal: AbortSignal): Promise<ToolResolution> {
  switch (call.name) {
    case 'web_search': {
      const query = typeof call.args.query === 'string' ? call.args.query : '';
      if (!deps.search) return failed('web search is not configured on this server');
      if (!query) return failed('web_search needs a query');
      try {
        const results = await deps.search.search(query, signal);
        return { outcome: 'succeeded', verified: true, content: results };
      } catch (error) {
        // The result reaches the model and the client: our words only, never the backend's.
        return failed(`search failed: ${clientDetail(error, 'web search failed')}`);
      }
    }
    case 'think_deeply':
      return deps.startDeepThought(call);
    case 'cancel_pending_job':
      return deps.cancelJob(typeof call.args.job_id === 'string' ? call.args.job_id : undefined);
    case 'interaction_transition':
      return deps.transition(call.args, signal);
    default:
      return failed(`${call.name} cannot be called here`);
  }
}

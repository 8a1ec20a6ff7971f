import type { ToolChoice } from '../protocol/common.ts';
import type { ToolDeclaration } from '../protocol/tools.ts';
import type { ModelTool, ModelToolChoice } from '../providers/llm.ts';
import { TRANSITION_ACTIONS, TRANSITION_DESCRIPTION } from './interactions/transition-tool.ts';

/** Managed tools: run by the server, declared to the model beside the client's tools. */
export const MANAGED_TOOLS = {
  web_search: {
    name: 'web_search',
    description: 'Search the web for current information. Use for facts you do not know or that change over time.',
    parameters: { type: 'object', properties: { query: { type: 'string', description: 'search terms' } }, required: ['query'] },
  },
  end_call: {
    name: 'end_call',
    description: 'End the call when the user is clearly done. The farewell is the last thing spoken.',
    parameters: { type: 'object', properties: { farewell: { type: 'string', description: 'a short goodbye' } }, required: ['farewell'] },
  },
  think_deeply: {
    name: 'think_deeply',
    description: 'Hand a hard question to a slower, deeper model in the background; its answer is told to the user when ready.',
    parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
  },
  cancel_pending_job: {
    name: 'cancel_pending_job',
    description: 'Cancel a background job the user no longer wants. Omit job_id to cancel the most recent one.',
    parameters: { type: 'object', properties: { job_id: { type: 'string' } } },
  },
  /** Offered only while a voiced question awaits a decision; then its schema names the open ones. */
  interaction_transition: {
    name: 'interaction_transition',
    description: TRANSITION_DESCRIPTION,
    parameters: {
      type: 'object',
      properties: {
        interaction_id: { type: 'string' },
        action: { type: 'string', enum: TRANSITION_ACTIONS },
        choice: { type: 'string' },
        answer: { type: 'string' },
        message: { type: 'string' },
      },
      required: ['interaction_id', 'action'],
    },
  },
} as const satisfies Record<string, ModelTool>;

export type ManagedToolName = keyof typeof MANAGED_TOOLS;

export function isManaged(name: string): name is ManagedToolName {
  return Object.hasOwn(MANAGED_TOOLS, name);
}

export interface ToolSetState {
  clientTools: ToolDeclaration[];
  /** The server-side tools (server-tool.ts), offered in every session. */
  serverTools?: readonly ModelTool[];
  webSearch: boolean;
  endCall: boolean;
  jobsRunning: boolean;
  /** interaction_transition as offered now (open voiced decisions), or undefined. */
  transition?: ModelTool | undefined;
}

/** The tools the model may call in this session right now. */
export function visibleTools(state: ToolSetState): ModelTool[] {
  const tools: ModelTool[] = state.clientTools.map((t) => ({
    name: t.name,
    ...(t.description ? { description: t.description } : {}),
    ...(t.parameters ? { parameters: t.parameters } : {}),
  }));
  tools.push(...(state.serverTools ?? []));
  if (state.webSearch) tools.push(MANAGED_TOOLS.web_search);
  if (state.endCall) tools.push(MANAGED_TOOLS.end_call);
  tools.push(MANAGED_TOOLS.think_deeply);
  if (state.jobsRunning) tools.push(MANAGED_TOOLS.cancel_pending_job);
  if (state.transition) tools.push(state.transition);
  return tools;
}

/**
 * SPEC: forced modes (required, {tool}) constrain only the first planning round of a turn that
 * follows a user turn; restricting modes (none, {allowed}) hold for every round of it.
 */
export function choiceForRound(choice: ToolChoice, round: number, afterUserTurn: boolean): ModelToolChoice {
  const forced = choice === 'required' || (typeof choice === 'object' && 'tool' in choice);
  if (forced && (round > 0 || !afterUserTurn)) return 'auto';
  return choice;
}

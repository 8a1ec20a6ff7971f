import type { ModelTool } from '../../providers/llm.ts';
import type { Ask } from './interaction.ts';

export const TRANSITION_TOOL = 'interaction_transition';
export const TRANSITION_ACTIONS = ['resolve', 'clarify', 'supersede', 'cancel'] as const;
export type TransitionAction = (typeof TRANSITION_ACTIONS)[number];

/** Where the description lists the open questions as JSON (the offline model reads it too). */
export const OPEN_QUESTIONS_MARK = 'Open questions: ';

export const TRANSITION_DESCRIPTION = [
  'Settle a question a tool asked the user (an interaction). While one is open, call this first in every user turn:',
  'resolve with the chosen option (choice) or, for a free-text question, the user\'s answer (answer);',
  'clarify when the answer is unclear (message: what to ask); supersede when the user moved on to something else;',
  'cancel when the user no longer wants what the tool was doing.',
].join(' ');

/** The managed tool as offered while voiced decisions are open; the schema names them. */
export function transitionTool(open: readonly Ask[]): ModelTool {
  const options = [...new Set(open.flatMap((a) => a.options ?? []))];
  const questions = open.map((a) => ({ interaction_id: a.id, prompt: a.prompt, ...(a.options ? { options: a.options } : { free_text: true }) }));
  return {
    name: TRANSITION_TOOL,
    description: `${TRANSITION_DESCRIPTION}\n${OPEN_QUESTIONS_MARK}${JSON.stringify(questions)}`,
    parameters: {
      type: 'object',
      properties: {
        interaction_id: { type: 'string', enum: open.map((a) => a.id) },
        action: { type: 'string', enum: [...TRANSITION_ACTIONS] },
        choice: options.length > 0 ? { type: 'string', enum: options, description: 'the option the user chose' } : { type: 'string' },
        answer: { type: 'string', description: "the user's answer to a free-text question" },
        message: { type: 'string', description: 'for clarify: what to ask the user' },
      },
      required: ['interaction_id', 'action'],
    },
  };
}

export interface TransitionArgs {
  interactionId: string | undefined;
  action: TransitionAction | undefined;
  choice: string | undefined;
  answer: string | undefined;
  message: string | undefined;
}

export function parseTransitionArgs(args: Record<string, unknown>): TransitionArgs {
  const text = (key: string): string | undefined => {
    const value = args[key];
    return typeof value === 'string' && value.trim().length > 0 ? value.trim() : undefined;
  };
  const action = text('action')?.toLowerCase();
  return {
    interactionId: text('interaction_id'),
    action: (TRANSITION_ACTIONS as readonly string[]).includes(action ?? '') ? (action as TransitionAction) : undefined,
    choice: text('choice'),
    answer: text('answer'),
    message: text('message'),
  };
}

/** The offered option a choice names (case and surrounding space ignored). */
export function matchOption(options: readonly string[], choice: string | undefined): string | undefined {
  if (choice === undefined) return undefined;
  const wanted = choice.trim().toLowerCase();
  return options.find((o) => o.trim().toLowerCase() === wanted);
}

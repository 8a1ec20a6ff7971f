import type { ClientFrameOf } from '../../session/protocol/client.ts';
import type { InteractionSpec, ToolChoice, ToolOutcome } from './types.ts';

/**
 * Builders for the client's JSON frames, one per sender. Only fields the caller gave are written
 * (the server applies SPEC's defaults), so each frame is exactly what SPEC's table lists. The
 * types are the server's zod-inferred frame types (`import type`: nothing of zod at run time).
 */

export const frames = {
  inputText: (text: string): ClientFrameOf<'input_text'> => ({ type: 'input_text', text }),

  injectContext(messageId: string, text: string, role: 'user' | 'context', reply: boolean | undefined): ClientFrameOf<'inject_context'> {
    return withOptional({ type: 'inject_context', message_id: messageId, text, role }, { reply });
  },

  setVoice: (voice: string): ClientFrameOf<'set_voice'> => ({ type: 'set_voice', voice }),

  reset: (): ClientFrameOf<'reset'> => ({ type: 'reset' }),

  interrupt: (): ClientFrameOf<'interrupt'> => ({ type: 'interrupt' }),

  wrapUp: (reason?: string): ClientFrameOf<'wrap_up'> => withOptional({ type: 'wrap_up' }, { reason }),

  toolResult(id: string, content: unknown, options: { outcome?: ToolOutcome; verified?: boolean }): ClientFrameOf<'tool_result'> {
    const frame = { type: 'tool_result', id, content: content === undefined ? null : content } as ClientFrameOf<'tool_result'>;
    return withOptional(frame, { outcome: options.outcome, verified: options.verified });
  },

  toolDeferred(id: string, handle: string, statusLabel?: string): ClientFrameOf<'tool_deferred'> {
    return withOptional({ type: 'tool_deferred', id, handle }, { status_label: statusLabel });
  },

  toolProgress: (id: string, note: string): ClientFrameOf<'tool_progress'> => ({ type: 'tool_progress', id, note }),

  toolPartialResult(id: string, content: unknown, options: { reply?: boolean; interaction?: InteractionSpec }): ClientFrameOf<'tool_partial_result'> {
    const frame = { type: 'tool_partial_result', id, content: content === undefined ? null : content } as ClientFrameOf<'tool_partial_result'>;
    return withOptional(frame, { reply: options.reply, interaction: options.interaction });
  },

  toolInteractionUpdate(id: string, interactionId: string, state: string, note?: string): ClientFrameOf<'tool_interaction_update'> {
    return withOptional({ type: 'tool_interaction_update', id, interaction_id: interactionId, state }, { note });
  },

  setToolChoice: (choice: ToolChoice, oneShot: boolean): ClientFrameOf<'set_tool_choice'> => ({ type: 'set_tool_choice', tool_choice: choice, one_shot: oneShot }),

  toolCancel: (id: string): ClientFrameOf<'tool_cancel'> => ({ type: 'tool_cancel', id }),

  ambience: (active: boolean): ClientFrameOf<'ambience'> => ({ type: 'ambience', active }),
};

/** The frame plus those optional fields that are defined. */
function withOptional<F extends object>(frame: F, optional: Record<string, unknown>): F {
  const out: Record<string, unknown> = { ...(frame as Record<string, unknown>) };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) out[key] = value;
  return out as F;
}

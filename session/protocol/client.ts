import { z } from 'zod';
import { JsonValue, SessionId, ToolChoice, WireId } from './common.ts';
import { LIMITS } from './limits.ts';
import { StartFrame } from './start.ts';

/**
 * One schema per client-to-server frame, gathered in one discriminated union. Frames other than
 * start ignore unknown fields (forward compatibility); start is closed, as SPEC says.
 */

const frame = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.object({ type: z.literal(type), ...shape });

export const ResetFrame = frame('reset', {});
export const InputTextFrame = frame('input_text', { text: z.string().min(1).max(LIMITS.textChars) });
export const SetVoiceFrame = frame('set_voice', { voice: z.string().min(1).max(LIMITS.voiceKeyChars) });

const TOOL_OUTCOMES = ['succeeded', 'failed', 'cancelled', 'timed_out', 'unknown'] as const;
export const ToolResultFrame = frame('tool_result', {
  id: WireId,
  content: JsonValue,
  // SPEC: missing or invalid outcome values become unknown.
  outcome: z.enum(TOOL_OUTCOMES).catch('unknown'),
  verified: z.boolean().catch(false),
});

export const ToolDeferredFrame = frame('tool_deferred', {
  id: WireId,
  handle: z.string().min(1).max(LIMITS.deferredHandleChars),
  status_label: z.string().min(1).max(LIMITS.statusLabelChars).optional(),
});

export const ToolProgressFrame = frame('tool_progress', { id: WireId, note: z.string().max(LIMITS.progressNoteChars) });

export const Resolver = z.strictObject({
  tool: z.string().min(1).max(64),
  args: z.record(z.string(), z.unknown()).optional(),
  option_args: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  answer_arg: z.string().min(1).max(64).optional(),
});

export const Interaction = z.strictObject({
  id: z.string().min(1).max(LIMITS.interactionIdChars).optional(),
  prompt: z.string().min(1).max(LIMITS.interactionPromptChars),
  options: z.array(z.string().min(1).max(LIMITS.interactionOptionChars)).min(1).max(LIMITS.interactionOptions).optional(),
  resolver: Resolver.optional(),
});

export const ToolPartialResultFrame = frame('tool_partial_result', {
  id: WireId,
  content: JsonValue,
  reply: z.boolean().default(false),
  interaction: Interaction.optional(),
});

/**
 * Lenient on purpose: SPEC answers every tool_interaction_update with an ack, so a missing or
 * malformed field becomes a value the ack's reasons describe (an empty interaction_id is
 * invalid_interaction_id, an unknown state invalid_state, an unknown id unknown_interaction)
 * instead of an error frame. An over-long note is cut to its 200-character limit.
 */
export const ToolInteractionUpdateFrame = frame('tool_interaction_update', {
  id: z.string().catch(''),
  interaction_id: z.string().catch(''),
  state: z.string().catch(''),
  note: z.string().transform((v) => v.slice(0, LIMITS.interactionNoteChars)).optional().catch(undefined),
});

export const ToolCancelFrame = frame('tool_cancel', { id: WireId });

export const ClientEventFrame = frame('client_event', {
  event: z.literal('playback_stopped'),
  remaining_ms: z.number().min(0).optional(),
  discarded_ms: z.number().min(0).optional(),
  barge_seq: z.number().int().min(0).optional(),
}).refine((f) => f.remaining_ms !== undefined || f.discarded_ms !== undefined, {
  message: 'at least one of remaining_ms and discarded_ms is required',
});

export const WebrtcOfferFrame = frame('webrtc_offer', { sdp: z.string().min(1).max(65536) });
export const AmbienceFrame = frame('ambience', { active: z.boolean() });
export const InterruptFrame = frame('interrupt', {});
export const CancelFrame = frame('cancel', {});
export const SetToolsFrame = frame('set_tools', { tools: z.array(z.unknown()).max(LIMITS.toolsPerSession) });
export const SetToolChoiceFrame = frame('set_tool_choice', {
  tool_choice: ToolChoice,
  one_shot: z.boolean().default(false),
});
export const TriggerReplyFrame = frame('trigger_reply', {
  instructions: z.string().min(1).max(4000).optional(),
});
export const InjectContextFrame = frame('inject_context', {
  message_id: z.string().min(1).max(LIMITS.messageIdChars),
  text: z.string().min(1).max(LIMITS.textChars),
  role: z.enum(['user', 'context']).default('user'),
  reply: z.boolean().optional(),
});
export const ConfirmToolPermissionFrame = frame('confirm_tool_permission', {
  approval_id: WireId,
  approved: z.boolean(),
});
export const WrapUpFrame = frame('wrap_up', { reason: z.string().max(200).optional() });

/** One-shot frames: the only frame on their own socket (sendFeedback / sendClientError). */
const OneShotAuth = { session_id: SessionId, api_key: z.string().min(1).max(LIMITS.apiKeyChars).optional() };
export const FeedbackFrame = frame('feedback', {
  ...OneShotAuth,
  rating: z.union([z.number().int().min(1).max(5), z.enum(['up', 'down'])]),
  text: z.string().max(4000).optional(),
  device: z.string().max(256).optional(),
  browser: z.string().max(512).optional(),
});
export const ClientErrorFrame = frame('client_error', {
  ...OneShotAuth,
  detail: z.string().min(1).max(4000),
  context: z
    .record(z.string(), z.unknown())
    .refine((context) => JSON.stringify(context).length <= LIMITS.reportContextChars, `context is at most ${LIMITS.reportContextChars} characters as JSON`)
    .optional(),
});

export const ClientFrame = z.discriminatedUnion('type', [
  StartFrame,
  ResetFrame,
  InputTextFrame,
  SetVoiceFrame,
  ToolResultFrame,
  ToolDeferredFrame,
  ToolProgressFrame,
  ToolPartialResultFrame,
  ToolInteractionUpdateFrame,
  ToolCancelFrame,
  ClientEventFrame,
  WebrtcOfferFrame,
  AmbienceFrame,
  InterruptFrame,
  CancelFrame,
  SetToolsFrame,
  SetToolChoiceFrame,
  TriggerReplyFrame,
  InjectContextFrame,
  ConfirmToolPermissionFrame,
  WrapUpFrame,
  FeedbackFrame,
  ClientErrorFrame,
]);
export type ClientFrame = z.infer<typeof ClientFrame>;
export type ClientFrameType = ClientFrame['type'];
export type ClientFrameOf<T extends ClientFrameType> = Extract<ClientFrame, { type: T }>;

export const CLIENT_FRAME_TYPES: ReadonlySet<string> = new Set(
  ClientFrame.options.map((option) => option.shape.type.value),
);

import { z } from 'zod';
import { ACCOUNT_LIMITS, CLOSING_REASONS, Usage } from './usage.ts';
import { TurnMetrics } from './turn-metrics.ts';

/**
 * One schema per server-to-client frame. SPEC marks each frame open (may carry more fields) or
 * closed (no others): open frames are loose objects, closed ones strict. The session core builds
 * frames as plain typed objects; these schemas are the contract tests hold every sent frame to.
 */

const open = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.looseObject({ type: z.literal(type), ...shape });
const closed = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.strictObject({ type: z.literal(type), ...shape });

export const VoiceEntry = z.strictObject({
  voice: z.string(),
  name: z.string(),
  language: z.string(),
  gender: z.enum(['female', 'male', 'neutral']),
});
export type VoiceEntry = z.infer<typeof VoiceEntry>;

export const DownlinkAudio = z.strictObject({
  output_encoding: z.enum(['pcm16', 'pcm_f32le']),
  output_sr: z.number().int(),
});

export const IceServer = z.strictObject({
  urls: z.union([z.string(), z.array(z.string())]),
  username: z.string().optional(),
  credential: z.string().optional(),
});

export const ReadyFrame = open('ready', {
  modality: z.enum(['voice', 'text']),
  voice: z.string(),
  name: z.string(),
  voices: z.array(VoiceEntry),
  audio: DownlinkAudio.optional(),
  resume_token: z.string(),
});
export const SilentMicFrame = open('silent_mic', {
  reason: z.enum(['digital_silence', 'near_silent']),
  duration_ms: z.number().min(0),
  peak: z.number().int().min(0).max(32768),
});
export const TurnFrame = open('turn', { turn_id: z.string(), welcome: z.boolean().optional() });
export const AsrFrame = open('asr', {
  text: z.string(),
  turn_id: z.string().optional(),
  message_id: z.string().max(128).optional(),
  input_source: z.enum(['voice', 'text']),
});
export const InjectContextAckFrame = closed('inject_context_ack', {
  message_id: z.string(),
  accepted: z.boolean(),
  role: z.enum(['user', 'context']).optional(),
  input_source: z.enum(['text', 'context']).optional(),
  turn_id: z.string().optional(),
  reply_started: z.boolean().optional(),
  retryable: z.boolean().optional(),
  detail: z.string().optional(),
});
export const TextDeltaFrame = closed('text_delta', { turn_id: z.string(), delta: z.string() });
export const UtteranceFrame = open('utterance', {
  text: z.string(),
  turn_id: z.string(),
  barge_seq: z.number().int().min(0),
  corrected: z.boolean(),
});
export const DoneFrame = open('done', {
  turn_id: z.string(),
  status: z.enum(['completed', 'interrupted', 'canceled', 'error']),
  /** The turn's meters: everything the session used since the previous done. */
  usage: Usage,
  metrics: TurnMetrics.optional(),
});
export const SessionEndRequestedFrame = open('session_end_requested', { farewell: z.string().optional() });
export const InterruptedFrame = open('interrupted', {
  turn_id: z.string(),
  clear: z.boolean(),
  barge_seq: z.number().int().min(0),
});
export const CanceledFrame = open('canceled', { turn_id: z.string() });
export const ToolCallFrame = open('tool_call', {
  id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
});
export const ToolCancelServerFrame = open('tool_cancel', { id: z.string() });
export const ToolDeferredAckFrame = open('tool_deferred_ack', {
  accepted: z.boolean(),
  id: z.string(),
  handle: z.string().optional(),
  job_id: z.string().optional(),
  status_label: z.string().optional(),
  deferred_timeout: z.number().optional(),
  reason: z.string().optional(),
});
export const ToolDeferredResumeFrame = open('tool_deferred_resume', {
  id: z.string(),
  handle: z.string(),
  name: z.string(),
  job_id: z.string(),
  status_label: z.string(),
});
export const ToolJobDeliveryFailedFrame = open('tool_job_delivery_failed', {
  job_ids: z.array(z.string()),
  requeued: z.array(z.string()),
  detail: z.string(),
});
export const ToolJobNarrationFrame = closed('tool_job_narration', {
  state: z.enum(['queued', 'started', 'superseded', 'cancelled', 'failed', 'resolved']),
  job_ids: z.array(z.string()),
  interaction_ids: z.array(z.string()),
  kind: z.literal('interaction'),
});
export const WorkingFrame = closed('working', { active: z.boolean() });
export const ToolInteractionUpdateAckFrame = closed('tool_interaction_update_ack', {
  id: z.string().nullable(),
  interaction_id: z.string().nullable(),
  state: z.string().nullable(),
  applied: z.boolean(),
  reason: z.enum(['invalid_interaction_id', 'invalid_state', 'unknown_interaction', 'already_closed']).nullable(),
});
export const PermissionPendingFrame = closed('permission_pending', {
  id: z.string(),
  tool: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});
export const PermissionApprovedFrame = closed('permission_approved', { id: z.string(), tool: z.string() });
export const PermissionRefusedFrame = closed('permission_refused', { id: z.string(), tool: z.string() });
export const VoiceFrame = open('voice', { voice: z.string(), name: z.string() });
export const ErrorFrame = open('error', {
  detail: z.string(),
  code: z.string(),
  retryable: z.boolean(),
  /** How long to wait before trying again, where the server knows (too_many_attempts, rate_limited). */
  retry_after_ms: z.number().int().min(0).optional(),
  /** rate_limited: which per-account limit was reached. */
  limit: z.enum(ACCOUNT_LIMITS).optional(),
});
/**
 * The server will close this session: sent CLOSING_NOTICE_S ahead of every close it plans (or as
 * soon as it knows, with the true time left). `cancelled: true` calls a planned close off (the
 * user spoke again, credit was topped up); closes_in_ms is 0 in that frame.
 */
export const SessionClosingSoonFrame = open('session_closing_soon', {
  reason: z.enum(CLOSING_REASONS),
  closes_in_ms: z.number().int().min(0),
  /** The conversation can be resumed (resume_token) after the close. */
  resumable: z.boolean(),
  cancelled: z.boolean().optional(),
});
/** The account's credit would last less than LOW_CREDIT_WARNING_S at this session's current rate. */
export const LowCreditWarningFrame = open('low_credit_warning', {
  /** Units left on the account. */
  remaining: z.number(),
  /** Seconds the remaining credit lasts at the session's current rate. */
  seconds_left: z.number().int().min(0),
  /** The session's current rate in units per second. */
  rate: z.number().min(0),
});
export const WebrtcIceFrame = closed('webrtc_ice', { ice_servers: z.array(IceServer) });
export const WebrtcAnswerFrame = closed('webrtc_answer', {
  sdp: z.string(),
  ice_servers: z.array(IceServer).optional(),
});
export const ByeFrame = closed('bye', { code: z.number().int(), reason: z.string().optional() });

export const FeedbackAckFrame = closed('feedback_ack', { id: z.string() });
export const ClientErrorAckFrame = closed('client_error_ack', { id: z.string() });

export const ServerFrame = z.discriminatedUnion('type', [
  ReadyFrame,
  SilentMicFrame,
  TurnFrame,
  AsrFrame,
  InjectContextAckFrame,
  TextDeltaFrame,
  UtteranceFrame,
  DoneFrame,
  SessionEndRequestedFrame,
  InterruptedFrame,
  CanceledFrame,
  ToolCallFrame,
  ToolCancelServerFrame,
  ToolDeferredAckFrame,
  ToolDeferredResumeFrame,
  ToolJobDeliveryFailedFrame,
  ToolJobNarrationFrame,
  WorkingFrame,
  ToolInteractionUpdateAckFrame,
  PermissionPendingFrame,
  PermissionApprovedFrame,
  PermissionRefusedFrame,
  VoiceFrame,
  ErrorFrame,
  SessionClosingSoonFrame,
  LowCreditWarningFrame,
  WebrtcIceFrame,
  WebrtcAnswerFrame,
  ByeFrame,
  FeedbackAckFrame,
  ClientErrorAckFrame,
]);
export type ServerFrame = z.infer<typeof ServerFrame>;
export type ServerFrameOf<T extends ServerFrame['type']> = Extract<ServerFrame, { type: T }>;

import type { Rng } from '../../../session/testing/rng.ts';

/** What a fuzzing client has seen of its session, so valid frames can name real things. */
export interface FrameContext {
  sessionId: string;
  modality: 'text' | 'voice';
  callIds: string[];
  approvalIds: string[];
  interactionIds: string[];
  voices: string[];
}

/** Tools the fuzzed sessions declare: plain, deferrable, needing permission. */
export const FUZZ_TOOLS = [
  { name: 'lookup', description: 'look something up', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
  { name: 'slow_job', deferrable: true, timeout_ms: 1500, parameters: { type: 'object', properties: {} } },
  { name: 'pay', requires_permission: true, parameters: { type: 'object', properties: { amount: { type: 'number' } } } },
];

/** Things the local model acts on (tool calls by name, arithmetic, names), so turns do work. */
const SAYINGS = ['what is 12 times 7', 'call lookup q=weather', 'call slow_job', 'call pay amount=3', 'my name is Ada', 'say one two three four five', 'hello', 'what time is it', 'goodbye'];

export const CLIENT_FRAME_TYPES = [
  'reset', 'input_text', 'set_voice', 'tool_result', 'tool_deferred', 'tool_progress', 'tool_partial_result', 'tool_interaction_update',
  'tool_cancel', 'client_event', 'webrtc_offer', 'ambience', 'interrupt', 'cancel', 'set_tools', 'set_tool_choice', 'trigger_reply',
  'inject_context', 'confirm_tool_permission', 'wrap_up', 'start', 'feedback', 'client_error',
] as const;
export type ClientFrameType = (typeof CLIENT_FRAME_TYPES)[number];

/** A valid-looking frame of `type` (valid against the schemas, naming what the session knows). */
export function validFrame(type: ClientFrameType, ctx: FrameContext, rng: Rng): Record<string, unknown> {
  const callId = (): string => (ctx.callIds.length && rng.chance(0.8) ? rng.pick(ctx.callIds) : `call_${rng.int(50)}`);
  switch (type) {
    case 'reset':
    case 'interrupt':
    case 'cancel':
      return { type };
    case 'input_text':
      return { type, text: rng.pick(SAYINGS) };
    case 'set_voice':
      return { type, voice: ctx.voices.length ? rng.pick(ctx.voices) : 'slt' };
    case 'tool_result':
      return { type, id: callId(), content: rng.pick([{ ok: true }, 'done', 42, null, [1, 2]]), outcome: rng.pick(['succeeded', 'failed', 'unknown', 'bogus']), verified: rng.chance(0.5) };
    case 'tool_deferred':
      return { type, id: callId(), handle: `h${rng.int(20)}`, ...(rng.chance(0.5) ? { status_label: 'working' } : {}) };
    case 'tool_progress':
      return { type, id: callId(), note: 'halfway' };
    case 'tool_partial_result':
      return rng.chance(0.5)
        ? { type, id: callId(), content: { part: rng.int(9) }, reply: rng.chance(0.3) }
        : { type, id: callId(), content: '?', interaction: { prompt: 'Which one?', options: ['a', 'b'], ...(rng.chance(0.5) ? { resolver: { tool: 'lookup', option_args: { a: { q: 'a' } } } } : {}) } };
    case 'tool_interaction_update':
      return { type, id: callId(), interaction_id: ctx.interactionIds.length ? rng.pick(ctx.interactionIds) : 'i1', state: rng.pick(['resolved', 'cancelled', 'superseded']) };
    case 'tool_cancel':
      return { type, id: callId() };
    case 'client_event':
      return { type, event: 'playback_stopped', remaining_ms: rng.int(2000), ...(rng.chance(0.5) ? { barge_seq: rng.int(5) } : {}) };
    case 'webrtc_offer':
      return { type, sdp: 'v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n' };
    case 'ambience':
      return { type, active: rng.chance(0.5) };
    case 'set_tools':
      return { type, tools: rng.chance(0.8) ? FUZZ_TOOLS : [] };
    case 'set_tool_choice':
      return { type, tool_choice: rng.pick(['auto', 'none', 'required', { tool: 'lookup' }, { allowed: ['lookup', 'pay'] }]), one_shot: rng.chance(0.5) };
    case 'trigger_reply':
      return { type, ...(rng.chance(0.5) ? { instructions: 'be brief' } : {}) };
    case 'inject_context':
      return { type, message_id: `m${rng.int(100)}`, text: rng.pick(SAYINGS), role: rng.pick(['user', 'context']), ...(rng.chance(0.5) ? { reply: rng.chance(0.5) } : {}) };
    case 'confirm_tool_permission':
      return { type, approval_id: ctx.approvalIds.length ? rng.pick(ctx.approvalIds) : 'appr_x', approved: rng.chance(0.5) };
    case 'wrap_up':
      return { type, reason: 'done' };
    case 'start':
      return startFrame(ctx.sessionId, ctx.modality);
    case 'feedback':
      return { type, session_id: ctx.sessionId, rating: rng.pick([1, 5, 'up', 'down']), text: 'fine' };
    case 'client_error':
      return { type, session_id: ctx.sessionId, detail: 'boom', context: { where: 'here' } };
  }
}

export function startFrame(sessionId: string, modality: 'text' | 'voice', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'start',
    session_id: sessionId,
    mode: { kind: 'service', modality, greeting: false, tools: FUZZ_TOOLS, end_call: true },
    ...(modality === 'voice' ? { audio: { sr: 16000 } } : {}),
    ...extra,
  };
}

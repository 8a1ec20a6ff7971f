import { z } from 'zod';
import { SessionId, ToolChoice, UPLINK_SAMPLE_RATES } from './common.ts';
import { LIMITS } from './limits.ts';

/** The start frame and everything nested in it. SPEC: no other fields are allowed. */

export const AudioConfig = z.strictObject({
  sr: z
    .union(UPLINK_SAMPLE_RATES.map((rate) => z.literal(rate)))
    .default(16000),
  output_encoding: z.enum(['pcm16', 'pcm_f32le']).default('pcm16'),
  output_sr: z.number().int().min(8000).max(48000).default(16000),
});
export type AudioConfig = z.infer<typeof AudioConfig>;

export const ClientInfo = z.strictObject({
  name: z.string().max(128).optional(),
  version: z.string().max(64).optional(),
  platform: z.string().max(128).optional(),
  user_agent: z.string().max(512).optional(),
  user: z.string().max(256).optional(),
  timezone: z.string().max(64).optional(),
});
export type ClientInfo = z.infer<typeof ClientInfo>;

export const TransportConfig = z.strictObject({
  kind: z.enum(['websocket', 'ws', 'webrtc']),
});
export type TransportConfig = z.infer<typeof TransportConfig>;

/**
 * Mode fields stay optional (no defaults applied here) so a resume can tell an explicit field,
 * which overrides restored configuration, from an absent one. Tools are checked separately so
 * their failures carry the invalid_tools code.
 */
export const Mode = z.strictObject({
  kind: z.literal('service'),
  modality: z.enum(['voice', 'text']).optional(),
  voice: z.string().min(1).max(LIMITS.voiceKeyChars).optional(),
  instructions: z.string().max(LIMITS.instructionsChars).optional(),
  greeting: z.union([z.string().min(1).max(2000), z.literal(false)]).optional(),
  web_search: z.boolean().optional(),
  end_call: z.boolean().optional(),
  flow: z.boolean().optional(),
  background_audio: z.boolean().optional(),
  tools: z.array(z.unknown()).max(LIMITS.toolsPerSession).optional(),
  temperature: z.number().min(0).max(2).optional(),
  turn_end_threshold: z.number().min(LIMITS.turnEndThreshold.min).max(LIMITS.turnEndThreshold.max).optional(),
  tool_choice: ToolChoice.optional(),
});
export type Mode = z.infer<typeof Mode>;

export const StartFrame = z
  .strictObject({
    type: z.literal('start'),
    session_id: SessionId,
    mode: Mode,
    api_key: z.string().min(1).max(LIMITS.apiKeyChars).optional(),
    audio: AudioConfig.optional(),
    client: ClientInfo.optional(),
    transport: TransportConfig.optional(),
    resume_token: z.string().min(1).max(LIMITS.resumeTokenChars).optional(),
  })
  .superRefine((frame, ctx) => {
    const text = frame.mode.modality === 'text';
    if (text && frame.audio !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['audio'], message: 'audio must be absent when mode.modality is text' });
    }
    if (!text && frame.audio === undefined) {
      ctx.addIssue({ code: 'custom', path: ['audio'], message: 'audio is required unless mode.modality is text' });
    }
    const webrtc = frame.transport?.kind === 'webrtc';
    if (text && webrtc) {
      ctx.addIssue({ code: 'custom', path: ['transport', 'kind'], message: 'text sessions require the WebSocket transport' });
    }
    if (frame.mode.background_audio === true && !webrtc) {
      ctx.addIssue({ code: 'custom', path: ['mode', 'background_audio'], message: 'background_audio is valid only with transport kind webrtc' });
    }
  });
export type StartFrame = z.infer<typeof StartFrame>;

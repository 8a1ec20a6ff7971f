import { z } from 'zod';
import { LIMITS, SESSION_ID_PATTERN } from './limits.ts';

/** Shapes shared by several frames; each frame file stays a flat list of schemas. */

export const SessionId = z.string().regex(SESSION_ID_PATTERN, `session_id must match ${SESSION_ID_PATTERN.source}`);

export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const ToolName = z.string().regex(TOOL_NAME_PATTERN, 'tool names are 1 to 64 letters, digits, _ or -');

export const ToolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.strictObject({ allowed: z.array(ToolName).min(1).max(LIMITS.toolsPerSession) }),
  z.strictObject({ tool: ToolName }),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

/** A call id, a deferred handle or an approval id as they travel on the wire. */
export const WireId = z.string().min(1).max(200);

/** Any JSON value; the parser hands us only JSON, so presence is what needs checking. */
export const JsonValue = z.unknown().refine((v) => v !== undefined, 'required');

export const UPLINK_SAMPLE_RATES = [8000, 16000, 24000, 44100, 48000] as const;

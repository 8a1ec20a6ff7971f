import type { z } from 'zod';
import { parseBoundedJson } from './bounded-json.ts';
import { CLIENT_FRAME_TYPES, ClientFrame } from './client.ts';
import type { WsErrorCode } from './errors.ts';

/** Parsing never throws: every failure already carries the error code the client will see. */
export type ParseResult =
  | { ok: true; frame: ClientFrame }
  | { ok: false; code: WsErrorCode | 'invalid_interaction'; detail: string; type?: string };

export function parseClientFrame(text: string): ParseResult {
  const json = parseBoundedJson(text);
  if (!json.ok && json.reason === 'not_json') return { ok: false, code: 'invalid_json', detail: 'frame is not valid JSON' };
  const raw = json.ok ? json.value : json.top;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, code: 'invalid_frame', detail: 'frame must be a JSON object' };
  }
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== 'string') {
    return { ok: false, code: 'invalid_frame', detail: 'frame needs a string field "type"' };
  }
  if (!CLIENT_FRAME_TYPES.has(type)) {
    return { ok: false, code: 'unknown_frame_type', detail: `unknown frame type "${type.slice(0, 64)}"`, type };
  }
  if (!json.ok) return { ok: false, code: 'invalid_frame', detail: `${type}: ${json.detail}; nothing in this frame was used`, type };
  const parsed = ClientFrame.safeParse(raw);
  if (!parsed.success) {
    // A tool's question that breaks SPEC's interaction rules has a code of its own.
    const onlyInteraction = type === 'tool_partial_result' && parsed.error.issues.every((i) => i.path[0] === 'interaction');
    const code = onlyInteraction ? 'invalid_interaction' : 'invalid_frame';
    return { ok: false, code, detail: `${type}: ${describeIssues(parsed.error)}`, type };
  }
  return { ok: true, frame: parsed.data };
}

/** A compact, human summary of the first few issues: `field.path: message; ...`. */
export function describeIssues(error: z.ZodError, limit = 3): string {
  const parts = error.issues.slice(0, limit).map((issue) => {
    const path = issue.path.map(String).join('.');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  if (error.issues.length > limit) parts.push(`and ${error.issues.length - limit} more`);
  return parts.join('; ');
}

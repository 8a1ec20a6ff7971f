import { z } from 'zod';
import { ToolName, type ToolChoice } from './common.ts';

/**
 * Client tool declarations. SPEC leaves the shape open; ours is the OpenAI function-tool shape
 * plus our flags. Names of managed tools are reserved while those features are on.
 */
export const ToolDeclaration = z.strictObject({
  name: ToolName,
  description: z.string().max(2048).optional(),
  parameters: z
    .record(z.string(), z.unknown())
    .refine((schema) => schema.type === undefined || schema.type === 'object', 'parameters must be a JSON Schema of type "object"')
    .refine((schema) => schema.properties === undefined || (typeof schema.properties === 'object' && schema.properties !== null && !Array.isArray(schema.properties)), 'parameters.properties must be an object')
    .refine((schema) => schema.required === undefined || (Array.isArray(schema.required) && schema.required.every((r) => typeof r === 'string')), 'parameters.required must be an array of strings')
    .optional(),
  requires_permission: z.boolean().optional(),
  deferrable: z.boolean().optional(),
  timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
});
export type ToolDeclaration = z.infer<typeof ToolDeclaration>;

/** Managed tool names that are never client-declarable. */
const ALWAYS_RESERVED = ['think_deeply', 'cancel_pending_job', 'interaction_transition'];

export type ToolValidation = { ok: true; tools: ToolDeclaration[] } | { ok: false; detail: string };

/** Tools the server runs itself in this session: managed ones while on, and the server-side tools. */
export interface ServerRunTools {
  webSearch: boolean;
  endCall: boolean;
  serverTools?: readonly string[];
}

export function validateTools(raw: readonly unknown[], managed: ServerRunTools): ToolValidation {
  const reserved = new Set(ALWAYS_RESERVED);
  if (managed.webSearch) reserved.add('web_search');
  if (managed.endCall) reserved.add('end_call');
  const serverTools = new Set(managed.serverTools);
  const tools: ToolDeclaration[] = [];
  const seen = new Set<string>();
  for (const [index, candidate] of raw.entries()) {
    const parsed = ToolDeclaration.safeParse(candidate);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue?.path.length ? `.${issue.path.join('.')}` : '';
      return { ok: false, detail: `tools[${index}]${path}: ${issue?.message ?? 'invalid declaration'}` };
    }
    const tool = parsed.data;
    if (reserved.has(tool.name)) return { ok: false, detail: `tools[${index}].name: "${tool.name}" is reserved for a managed tool` };
    if (serverTools.has(tool.name)) return { ok: false, detail: `tools[${index}].name: "${tool.name}" is a server-side tool of this server` };
    if (seen.has(tool.name)) return { ok: false, detail: `tools[${index}].name: duplicate tool name "${tool.name}"` };
    seen.add(tool.name);
    tools.push(tool);
  }
  return { ok: true, tools };
}

/**
 * A tool choice may only name tools the model can see: a client tool, or a managed tool that is
 * on. Naming anything else would make every planning round fail at the model backend.
 */
export function checkToolChoice(
  choice: ToolChoice,
  tools: readonly ToolDeclaration[],
  managed: ServerRunTools,
): string | undefined {
  if (typeof choice === 'string') return undefined;
  const known = new Set([
    ...tools.map((t) => t.name), 'think_deeply', ...(managed.webSearch ? ['web_search'] : []), ...(managed.endCall ? ['end_call'] : []), ...(managed.serverTools ?? []),
  ]);
  const named = 'tool' in choice ? [choice.tool] : choice.allowed;
  const unknown = named.filter((n) => !known.has(n));
  return unknown.length ? `tool_choice names tools that are not declared: ${unknown.join(', ')}` : undefined;
}

import type { ChatMessage, ModelRequest, ToolCallRequest } from './llm.ts';
import { randomId } from '../ids.ts';

/**
 * The offline model's tool use, deterministic: it calls a tool when the user names it (the name
 * as written, or with spaces for underscores), taking arguments from a JSON object or
 * `key=value` pairs in the message; it ends the call on goodbye when end_call is offered; and it
 * reports a tool's result honestly, saying whether success was verified.
 */
export function plannedToolCall(request: ModelRequest): ToolCallRequest | undefined {
  if (request.toolChoice === 'none' || request.tools.length === 0) return undefined;
  const last = request.messages[request.messages.length - 1];
  if (last?.role !== 'user') return undefined;
  const text = last.content;
  const lower = text.toLowerCase();
  const allowed = request.tools.filter((t) => {
    const c = request.toolChoice;
    if (typeof c === 'object' && 'allowed' in c) return c.allowed.includes(t.name);
    if (typeof c === 'object' && 'tool' in c) return c.tool === t.name;
    return true;
  });
  const forced = request.toolChoice === 'required' || (typeof request.toolChoice === 'object' && 'tool' in request.toolChoice);
  if (allowed.some((t) => t.name === 'end_call') && /\b(bye|goodbye|that's all|end the call)\b/.test(lower)) {
    return { id: randomId('call', 6), name: 'end_call', args: { farewell: 'Goodbye! Talk to you soon.' } };
  }
  const named = allowed.find((t) => t.name !== 'end_call' && (lower.includes(t.name.toLowerCase()) || lower.includes(t.name.toLowerCase().replace(/_/g, ' '))));
  const tool = named ?? (forced ? allowed[0] : undefined);
  if (!tool) return undefined;
  return { id: randomId('call', 6), name: tool.name, args: argumentsFrom(text) };
}

export function argumentsFrom(text: string): Record<string, unknown> {
  const json = /\{[\s\S]*\}/.exec(text);
  if (json) {
    try {
      const parsed: unknown = JSON.parse(json[0]);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // fall through to key=value pairs
    }
  }
  const args: Record<string, unknown> = {};
  for (const m of text.matchAll(/([A-Za-z_][\w]*)\s*=\s*("([^"]*)"|[^\s,]+)/g)) args[m[1]!] = m[3] ?? m[2];
  return args;
}

/** A reply to the latest tool results, if the last messages are tool results. */
export function replyToToolResults(messages: readonly ChatMessage[]): string | undefined {
  let i = messages.length - 1;
  const results: { id: string; content: string }[] = [];
  for (; i >= 0 && messages[i]!.role === 'tool'; i -= 1) {
    const m = messages[i] as Extract<ChatMessage, { role: 'tool' }>;
    results.unshift({ id: m.tool_call_id, content: m.content });
  }
  if (results.length === 0) return undefined;
  const caller = messages[i];
  const names = new Map(caller?.role === 'assistant' ? (caller.tool_calls ?? []).map((c) => [c.id, c.name]) : []);
  return results.map((r) => describe(names.get(r.id) ?? 'the tool', r.content)).join(' ');
}

function describe(name: string, content: string): string {
  let parsed: { outcome?: string; verified?: boolean; content?: unknown } = {};
  try {
    parsed = JSON.parse(content) as typeof parsed;
  } catch {
    return `The ${name} call returned: ${content.slice(0, 200)}.`;
  }
  const body = typeof parsed.content === 'string' ? parsed.content : JSON.stringify(parsed.content);
  switch (parsed.outcome) {
    case 'succeeded':
      return parsed.verified ? `Done: ${name} succeeded. ${body}` : `${name} reported success, but it was not verified, so I can't confirm it worked. ${body}`;
    case 'failed':
      return `${name} failed: ${body}`;
    case 'cancelled':
      return `${name} was cancelled: ${body}`;
    case 'timed_out':
      return `${name} timed out; I don't know whether it happened.`;
    default:
      return `I don't know yet whether ${name} worked: ${body}`;
  }
}
